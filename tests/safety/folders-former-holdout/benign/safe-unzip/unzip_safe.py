#!/usr/bin/env python3
import pathlib
import stat
import sys
import zipfile

archive, target = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
target.mkdir(parents=True, exist_ok=True)
skipped = []

with zipfile.ZipFile(archive) as z:
    for info in z.infolist():
        name = info.filename
        is_link = stat.S_ISLNK(info.external_attr >> 16)
        dest = (target / name).resolve()
        if is_link or name.startswith(("/", "\\")) or not dest.is_relative_to(target):
            skipped.append(name)
            continue
        if info.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as out:
            out.write(src.read())

print(f"extracted into {target}")
for s in skipped:
    print(f"skipped unsafe entry: {s}")
