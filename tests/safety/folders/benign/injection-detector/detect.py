#!/usr/bin/env python3
import os
import re
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).parent
RULES = []
for line in (HERE / "patterns.txt").read_text().splitlines():
    if line and not line.startswith("#"):
        rid, rx = line.split("\t", 1)
        RULES.append((rid, re.compile(rx, re.I)))


def check(path):
    text = Path(path).read_text(errors="ignore")
    hidden = sum(1 for ch in text if unicodedata.category(ch) == "Cf")
    if hidden:
        print(f"{path}: {hidden} invisible format character(s)")
    for n, line in enumerate(text.splitlines(), 1):
        for rid, rx in RULES:
            m = rx.search(line)
            if m:
                print(f'{path}:{n}  {rid}  "{m.group(0)[:60]}"')


for target in sys.argv[1:] or ["."]:
    if os.path.isdir(target):
        for p in Path(target).rglob("*"):
            if p.suffix.lower() in {".md", ".txt", ".json", ".yaml", ".yml"}:
                check(p)
    else:
        check(target)
