#!/usr/bin/env python3
import argparse
import csv
import pathlib

ap = argparse.ArgumentParser()
ap.add_argument("inbox")
ap.add_argument("--out", default="invoices.csv")
a = ap.parse_args()
rows = []
for f in sorted(pathlib.Path(a.inbox).glob("*")):
    if f.suffix.lower() in {".pdf", ".png", ".jpg", ".jpeg"}:
        rows.append({"file": f.name})
with open(a.out, "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=["file", "vendor", "invoice_no", "date", "description",
                                       "qty", "unit_price", "total", "currency"])
    w.writeheader()
    w.writerows(rows)
print(f"{len(rows)} invoices queued")
