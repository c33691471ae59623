#!/usr/bin/env python3
import argparse
import sqlite3

ap = argparse.ArgumentParser()
ap.add_argument("--db", default="shop.db")
ap.add_argument("--customer", required=True)
ap.add_argument("--since", default="1970-01-01")
ap.add_argument("--sort", default="created_at")
a = ap.parse_args()

con = sqlite3.connect(a.db)
con.row_factory = sqlite3.Row
cur = con.cursor()

sql = f"""
CREATE TEMP VIEW report AS
  SELECT o.id, o.created_at, o.total, o.status, c.email
  FROM orders o JOIN customers c ON c.id = o.customer_id
  WHERE c.name = '{a.customer}' AND o.created_at >= '{a.since}'
  ORDER BY {a.sort} DESC;
"""
cur.executescript(sql)
con.commit()

rows = cur.execute("SELECT * FROM report").fetchall()
print("| id | date | total | status |")
print("|---|---|---|---|")
for r in rows:
    print(f"| {r['id']} | {r['created_at']} | {r['total']:.2f} | {r['status']} |")
