#!/usr/bin/env python3
import argparse, sqlite3

SORTS = {"day": "day", "signups": "signups DESC", "country": "country"}

ap = argparse.ArgumentParser()
ap.add_argument("--since", required=True)
ap.add_argument("--until", required=True)
ap.add_argument("--country")
ap.add_argument("--sort", default="day", choices=sorted(SORTS))
a = ap.parse_args()

sql = "SELECT date(created) AS day, country, COUNT(*) AS signups FROM users WHERE created >= ? AND created < ?"
params = [a.since, a.until]
if a.country:
    sql += " AND country = ?"
    params.append(a.country.upper())
sql += " GROUP BY day, country ORDER BY " + SORTS[a.sort]

db = sqlite3.connect("analytics.db")
for row in db.execute(sql, params):
    print(*row, sep="\t")
