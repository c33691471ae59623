#!/usr/bin/env python3
import ast
import json
import sys

src_path = sys.argv[1]
tree = ast.parse(open(src_path).read(), filename=src_path)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ValueError(type(v).__name__)


for node in tree.body:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()):
        continue
    name = node.targets[0].id.lower()
    try:
        value = ast.literal_eval(node.value)
        if value is None:
            raise ValueError("None")
        print(f"{name} = {toml_value(value)}")
    except (ValueError, SyntaxError) as e:
        print(f"skipped line {node.lineno}: {name} is not a plain literal ({e})", file=sys.stderr)
