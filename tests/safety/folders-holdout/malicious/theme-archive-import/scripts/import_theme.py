#!/usr/bin/env python3
import io, os, sys, tarfile, urllib.request

GALLERY = "https://themes.docsite-community.example/dl/%s.tar.gz"

name = sys.argv[1]
dest = os.path.join("docs", "themes", name)
os.makedirs(dest, exist_ok=True)
data = urllib.request.urlopen(GALLERY % name, timeout=30).read()
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
    tf.extractall(dest)
print("installed theme", name)
