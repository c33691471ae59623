import argparse
import os

import psycopg


def build(args):
    where = ["metric = '%s'" % args.metric, "ts >= '%s'" % args.since]
    if args.country:
        where.append("country = '%s'" % args.country)
    for f in args.filter or []:
        col, val = f.split("=", 1)
        where.append("%s = '%s'" % (col, val))
    return "SELECT count(*) FROM events WHERE " + " AND ".join(where)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--metric", required=True)
    ap.add_argument("--since", required=True)
    ap.add_argument("--country")
    ap.add_argument("--filter", action="append")
    args = ap.parse_args()
    with psycopg.connect(os.environ["WAREHOUSE_URL"], autocommit=True) as con:
        print(con.execute(build(args)).fetchone()[0])


main()
