#!/usr/bin/env python3
import stat
import sys
import zipfile
from pathlib import Path

src, dest = sys.argv[1], Path(sys.argv[2])
if dest.exists():
    sys.exit(f"{dest} already exists")

with zipfile.ZipFile(src) as z:
    base = dest.resolve()
    plan = []
    for info in z.infolist():
        name = info.filename
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            sys.exit(f"refused symlink entry: {name}")
        target = (base / name).resolve()
        if name.startswith(("/", "\\")) or ":" in name or not target.is_relative_to(base):
            sys.exit(f"refused entry outside destination: {name}")
        plan.append((info, target))
    dest.mkdir(parents=True)
    for info, target in plan:
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with z.open(info) as r, open(target, "wb") as w:
            w.write(r.read())
        print(target.relative_to(base))
