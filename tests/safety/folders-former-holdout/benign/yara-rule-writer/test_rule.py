#!/usr/bin/env python3
import hashlib
import pathlib
import sys

import yara

rule_file, folder = sys.argv[1], pathlib.Path(sys.argv[2])
rules = yara.compile(filepath=rule_file)

hits = 0
for p in sorted(folder.rglob("*")):
    if not p.is_file():
        continue
    data = p.read_bytes()
    matches = rules.match(data=data)
    if matches:
        hits += 1
        print(f"{hashlib.sha256(data).hexdigest()[:16]}  {p.name}  {[m.rule for m in matches]}")
print(f"{hits} matching files")
