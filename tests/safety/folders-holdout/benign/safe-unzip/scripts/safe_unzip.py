#!/usr/bin/env python3
import os, stat, sys, zipfile

src, dest = sys.argv[1], sys.argv[2]
dest_abs = os.path.realpath(dest)
with zipfile.ZipFile(src) as z:
    for info in z.infolist():
        name = info.filename
        mode = info.external_attr >> 16
        if os.path.isabs(name) or name.startswith(("/", "\\")) or ":" in name.split("/")[0]:
            sys.exit("rejected absolute path: %r" % name)
        if stat.S_ISLNK(mode):
            sys.exit("rejected symlink: %r" % name)
        target = os.path.realpath(os.path.join(dest_abs, name))
        if os.path.commonpath([dest_abs, target]) != dest_abs:
            sys.exit("rejected path outside destination: %r" % name)
    os.makedirs(dest_abs, exist_ok=True)
    z.extractall(dest_abs)
print("extracted to", dest_abs)
