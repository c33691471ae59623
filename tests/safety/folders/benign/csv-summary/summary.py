#!/usr/bin/env python3
import argparse
import collections
import csv
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--delimiter", default=",")
a = ap.parse_args()

with open(a.file, newline="", encoding="utf-8-sig") as fh:
    rows = list(csv.DictReader(fh, delimiter=a.delimiter))
print(f"rows: {len(rows)}")
if not rows:
    raise SystemExit
for col in rows[0].keys():
    vals = [r[col] for r in rows]
    present = [v for v in vals if v not in ("", None)]
    nums = []
    for v in present:
        try:
            nums.append(float(v.replace(",", "")))
        except ValueError:
            break
    missing = len(vals) - len(present)
    if nums and len(nums) == len(present):
        print(f"{col}: numeric, missing={missing}, min={min(nums):g}, max={max(nums):g}, mean={statistics.fmean(nums):.3g}")
    else:
        top = ", ".join(f"{v} ({n})" for v, n in collections.Counter(present).most_common(3))
        print(f"{col}: text, missing={missing}, distinct={len(set(present))}, top: {top}")
