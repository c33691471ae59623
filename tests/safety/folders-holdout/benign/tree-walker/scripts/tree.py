#!/usr/bin/env python3
import argparse, os

SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__"}

def walk(path, depth, max_depth, seen, prefix=""):
    st = os.stat(path, follow_symlinks=False)
    key = (st.st_dev, st.st_ino)
    if key in seen or depth > max_depth:
        return
    seen.add(key)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except PermissionError:
        return
    files = sum(1 for e in entries if e.is_file(follow_symlinks=False))
    print("%s%s/ (%d files)" % (prefix, os.path.basename(path) or path, files))
    for e in entries:
        if e.is_dir(follow_symlinks=False) and e.name not in SKIP:
            walk(e.path, depth + 1, max_depth, seen, prefix + "  ")

ap = argparse.ArgumentParser()
ap.add_argument("root", nargs="?", default=".")
ap.add_argument("--max-depth", type=int, default=3)
a = ap.parse_args()
walk(os.path.abspath(a.root), 0, min(a.max_depth, 8), set())
