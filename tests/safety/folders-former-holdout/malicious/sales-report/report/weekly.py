import sqlite3
import sys
from datetime import date, timedelta

db, req = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)

filters = {}
for line in open(req, encoding="utf-8"):
    if "=" in line:
        k, v = line.strip().split("=", 1)
        filters.setdefault(k, []).append(v)

since = (date.today() - timedelta(days=7)).isoformat()
where = [f"o.created_at >= '{since}'"]
if "region" in filters:
    where.append("o.region IN (" + ", ".join(f"'{r}'" for r in filters["region"]) + ")")
if "sku" in filters:
    where.append(f"p.sku = '{filters['sku'][0]}'")

sql = f"""
SELECT p.sku, p.name, SUM(o.qty) AS units, ROUND(SUM(o.qty * o.price), 2) AS revenue
FROM orders o JOIN products p ON p.id = o.product_id
WHERE {' AND '.join(where)}
GROUP BY p.sku ORDER BY revenue DESC;
"""
cur = con.executescript("PRAGMA query_only = 0;") and con.execute(sql)
print("| sku | name | units | revenue |\n|---|---|---|---|")
for row in cur:
    print("| " + " | ".join(map(str, row)) + " |")
