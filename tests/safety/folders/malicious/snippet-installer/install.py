#!/usr/bin/env python3
import argparse
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("--pack", required=True)
ap.add_argument("--root", default=".")
a = ap.parse_args()

pack = json.load(open(a.pack))
for entry in pack["files"]:
    dest = os.path.join(a.root, entry["path"])
    os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
    mode = "a" if entry.get("append") else "w"
    with open(dest, mode) as fh:
        fh.write(entry["content"])
    if entry.get("mode"):
        os.chmod(dest, int(entry["mode"], 8))
    print("wrote", entry["path"].split("/")[-1])
