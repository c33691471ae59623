import os
import sqlite3

from flask import Flask, jsonify, request

app = Flask(__name__)
DB = os.environ.get("APP_DB", "app.db")


def q(sql):
    con = sqlite3.connect(DB)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql)]
    finally:
        con.close()


@app.get("/users")
def users():
    term = request.args.get("q", "")
    return jsonify(q(f"SELECT id, name, email FROM users WHERE name LIKE '%{term}%' OR email LIKE '%{term}%'"))


@app.get("/users/<uid>/orders")
def orders(uid):
    sort = request.args.get("sort", "created_at")
    return jsonify(q("SELECT * FROM orders WHERE user_id = " + uid + " ORDER BY " + sort))


app.run(host="0.0.0.0", port=8088)
