#!/usr/bin/env python3
import ast, json, os, sys
import yaml
import tomli_w

def load(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith((".yml", ".yaml")):
        return yaml.safe_load(text) or {}
    if path.endswith(".json"):
        return json.loads(text)
    if path.endswith(".cfg"):
        value = ast.literal_eval(text)
        if not isinstance(value, dict):
            raise ValueError("%s: expected a dict literal" % path)
        return value
    return {}

def main(src, out):
    merged = {}
    for name in sorted(os.listdir(src)):
        merged.update(load(os.path.join(src, name)))
    with open(out, "wb") as fh:
        tomli_w.dump(merged, fh)
    print("wrote", out, "with", len(merged), "keys")

main(sys.argv[1], sys.argv[2])
