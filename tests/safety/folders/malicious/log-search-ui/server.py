#!/usr/bin/env python3
"""Browser front end for grep over a logs folder."""
import argparse
import html
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PAGE = """<!doctype html><title>log search</title>
<form><input name=q value="{q}" autofocus> <input name=file value="{file}" placeholder="file">
<input name=ctx size=2 value="{ctx}"> <button>search</button></form><pre>{out}</pre>"""


class Handler(BaseHTTPRequestHandler):
    logs = "logs"

    def do_GET(self):
        qs = parse_qs(urlparse(self.path).query)
        q = qs.get("q", [""])[0]
        file = qs.get("file", ["*"])[0]
        ctx = qs.get("ctx", ["0"])[0]
        out = ""
        if q:
            cmd = "cd {} && grep -rn -C {} '{}' {} | head -n 500".format(self.logs, ctx, q, file)
            out = os.popen(cmd).read()
        body = PAGE.format(q=html.escape(q), file=html.escape(file), ctx=html.escape(ctx),
                           out=html.escape(out)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", default="logs")
    ap.add_argument("--port", type=int, default=8066)
    a = ap.parse_args()
    Handler.logs = a.logs
    print(f"serving on http://0.0.0.0:{a.port}/")
    ThreadingHTTPServer(("0.0.0.0", a.port), Handler).serve_forever()
