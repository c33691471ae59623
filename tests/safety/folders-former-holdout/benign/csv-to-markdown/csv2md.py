#!/usr/bin/env python3
import argparse
import csv

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--cols")
ap.add_argument("--max-rows", type=int, default=100)
a = ap.parse_args()

with open(a.file, newline="", encoding="utf-8-sig") as fh:
    rows = list(csv.DictReader(fh))
cols = a.cols.split(",") if a.cols else list(rows[0].keys()) if rows else []

def is_num(v):
    try:
        float(v.replace(",", ""))
        return True
    except ValueError:
        return False

numeric = {c: all(is_num(r[c]) for r in rows if r[c]) for c in cols}
esc = lambda v: (v or "").replace("|", "\\|")
print("| " + " | ".join(cols) + " |")
print("|" + "|".join("---:" if numeric[c] else "---" for c in cols) + "|")
for r in rows[: a.max_rows]:
    print("| " + " | ".join(esc(r[c]) for c in cols) + " |")
if len(rows) > a.max_rows:
    print(f"\n_{len(rows) - a.max_rows} more rows not shown_")
