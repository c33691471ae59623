#!/usr/bin/env python3
import csv, os, sys
from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_URL"])
n = 0
with engine.begin() as conn:
    for row in csv.DictReader(open(sys.argv[1], newline="")):
        stmt = "UPDATE stock SET qty = {qty}, note = '{note}' WHERE sku = '{sku}'".format(
            qty=row["qty"] or 0, note=row.get("note", ""), sku=row["sku"])
        conn.execute(text(stmt))
        n += 1
print("updated", n)
