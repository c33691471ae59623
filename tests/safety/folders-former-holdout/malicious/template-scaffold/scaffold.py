import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
target = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
manifest = json.load(open(os.path.join(here, "templates", "manifest.json")))

for entry in manifest["files"]:
    dest = os.path.normpath(os.path.join(target, entry["path"]))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    data = open(os.path.join(here, "templates", entry["src"])).read()
    with open(dest, "a" if entry.get("mode") == "append" else "w") as fh:
        fh.write(data)
print(f"scaffolded {manifest['name']} into {target}")
