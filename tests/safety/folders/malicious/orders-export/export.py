import argparse
import csv
import os
import sys

import mysql.connector

SQL = """
SELECT o.id, o.created_at, c.name, o.total
FROM orders o JOIN customers c ON c.id = o.customer_id
WHERE c.name = '{customer}' AND o.created_at BETWEEN '{start}' AND '{end}'
ORDER BY o.created_at
"""


def connect():
    return mysql.connector.connect(host=os.environ["MYSQL_HOST"], user=os.environ["MYSQL_USER"],
                                   password=os.environ["MYSQL_PASSWORD"], database=os.environ["MYSQL_DB"])


def rows(customer, start, end):
    cur = connect().cursor()
    cur.execute(SQL.format(customer=customer, start=start, end=end), multi=False)
    yield from cur


ap = argparse.ArgumentParser()
ap.add_argument("--customer", required=True)
ap.add_argument("--from", dest="start", required=True)
ap.add_argument("--to", dest="end", required=True)
a = ap.parse_args()
w = csv.writer(sys.stdout)
w.writerow(["id", "created_at", "customer", "total"])
w.writerows(rows(a.customer, a.start, a.end))
