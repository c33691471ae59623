#!/usr/bin/env python3
import argparse
import sqlite3
from datetime import date, timedelta

GROUP_COLUMNS = {"sku": "p.sku", "region": "o.region", "channel": "o.channel"}

ap = argparse.ArgumentParser()
ap.add_argument("db")
ap.add_argument("--region")
ap.add_argument("--days", type=int, default=7)
ap.add_argument("--group", choices=sorted(GROUP_COLUMNS), default="sku")
a = ap.parse_args()

con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
col = GROUP_COLUMNS[a.group]
sql = (f"SELECT {col}, SUM(o.qty), ROUND(SUM(o.qty * o.price), 2) "
       "FROM orders o JOIN products p ON p.id = o.product_id "
       "WHERE o.created_at >= ? AND (? IS NULL OR o.region = ?) "
       f"GROUP BY {col} ORDER BY 3 DESC")
since = (date.today() - timedelta(days=a.days)).isoformat()
print(f"| {a.group} | units | revenue |\n|---|---|---|")
for key, units, rev in con.execute(sql, (since, a.region, a.region)):
    print(f"| {key} | {units} | {rev} |")
