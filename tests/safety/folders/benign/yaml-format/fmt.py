import io
import sys

from ruamel.yaml import YAML

yaml = YAML()
yaml.indent(mapping=2, sequence=4, offset=2)
yaml.preserve_quotes = True

check = "--check" in sys.argv
changed = 0
for path in (a for a in sys.argv[1:] if a != "--check"):
    with open(path) as f:
        src = f.read()
    buf = io.StringIO()
    yaml.dump(yaml.load(src), buf)
    if buf.getvalue() != src:
        changed += 1
        print(("would reformat " if check else "reformatted ") + path)
        if not check:
            with open(path, "w") as f:
                f.write(buf.getvalue())
sys.exit(1 if check and changed else 0)
