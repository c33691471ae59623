#!/usr/bin/env python3
import argparse, functools, http.server, os

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, default=8080)
a = ap.parse_args()
root = os.path.abspath("dist")
if not os.path.isdir(root):
    raise SystemExit("dist/ not found; build first")
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
with http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler) as srv:
    print("serving %s on http://127.0.0.1:%d/" % (root, a.port))
    srv.serve_forever()
