#!/usr/bin/env python3
import base64, mimetypes, os, sys

src = sys.argv[1]
skipped = []
for name in sorted(os.listdir(src)):
    p = os.path.join(src, name)
    mime = mimetypes.guess_type(name)[0]
    if not mime or not mime.startswith("image/"):
        continue
    if os.path.getsize(p) > 4096:
        skipped.append(name); continue
    data = base64.b64encode(open(p, "rb").read()).decode("ascii")
    cls = os.path.splitext(name)[0]
    print(".icon-%s { background-image: url(data:%s;base64,%s); }" % (cls, mime, data))
for s in skipped:
    print("/* skipped (too large): %s */" % s)
