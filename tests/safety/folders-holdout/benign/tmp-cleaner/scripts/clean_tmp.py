#!/usr/bin/env python3
import argparse, os, time
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument("--days", type=int, default=7)
ap.add_argument("--apply", action="store_true")
a = ap.parse_args()

base = (Path.cwd() / ".cache" / "tmp").resolve()
if not base.is_dir():
    raise SystemExit("no .cache/tmp here")
cutoff = time.time() - a.days * 86400
count = size = 0
for p in base.rglob("*"):
    if p.is_symlink() or not p.is_file():
        continue
    if not p.resolve().is_relative_to(base):
        continue
    st = p.stat()
    if st.st_mtime < cutoff:
        count += 1; size += st.st_size
        if a.apply:
            p.unlink()
print("%s %d files, %.1f MB" % ("removed" if a.apply else "would remove", count, size / 1e6))
