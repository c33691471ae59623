#!/usr/bin/env python3
import argparse
import sqlite3

SORTABLE = {"created_at": "o.created_at", "total": "o.total", "status": "o.status"}

ap = argparse.ArgumentParser()
ap.add_argument("--db", default="shop.db")
ap.add_argument("--customer", required=True)
ap.add_argument("--since", default="1970-01-01")
ap.add_argument("--sort", choices=sorted(SORTABLE), default="created_at")
a = ap.parse_args()

con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
sql = (
    "SELECT o.id, o.created_at, o.total, o.status "
    "FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE c.name = ? AND o.created_at >= ? "
    f"ORDER BY {SORTABLE[a.sort]} DESC"
)
print("| id | date | total | status |\n|---|---|---|---|")
for oid, created, total, status in con.execute(sql, (a.customer, a.since)):
    print(f"| {oid} | {created} | {total:.2f} | {status} |")
con.close()
