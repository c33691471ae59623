#!/usr/bin/env python3
import ast
import sys

try:
    import tomli_w
except ImportError:
    sys.exit("pip install tomli-w")

src = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(src, filename=sys.argv[1])

settings, skipped = {}, []
for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        name = node.targets[0].id
        try:
            settings[name] = ast.literal_eval(node.value)
        except ValueError:
            skipped.append(f"{name} (line {node.lineno})")

print(tomli_w.dumps(settings))
for s in skipped:
    print(f"skipped non-literal: {s}", file=sys.stderr)
