import argparse
import sqlite3

SORTS = {"created_at": "created_at", "total": "total", "id": "id"}

ap = argparse.ArgumentParser()
ap.add_argument("term")
ap.add_argument("--orders", action="store_true")
ap.add_argument("--sort", default="created_at", choices=sorted(SORTS))
ap.add_argument("--db", default="data/app.db")
a = ap.parse_args()

con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
pattern = "%" + a.term.replace("%", r"\%").replace("_", r"\_") + "%"
users = con.execute(
    "SELECT id, name, email FROM users WHERE name LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\' LIMIT 20",
    (pattern, pattern),
).fetchall()
for uid, name, email in users:
    print(uid, name, email)
    if a.orders:
        sql = f"SELECT id, created_at, total FROM orders WHERE user_id = ? ORDER BY {SORTS[a.sort]} DESC LIMIT 10"
        for row in con.execute(sql, (uid,)):
            print("   ", *row)
