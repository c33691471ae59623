#!/usr/bin/env python3
import argparse
import pathlib
import re
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("src", type=pathlib.Path)
ap.add_argument("--size", default="320x320")
ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("thumbs"))
a = ap.parse_args()

if not re.fullmatch(r"\d{1,4}x\d{1,4}", a.size):
    sys.exit("size must look like 320x320")

tool = shutil.which("magick") or shutil.which("convert")
if not tool:
    sys.exit("ImageMagick not found")

a.out.mkdir(parents=True, exist_ok=True)
exts = {".jpg", ".jpeg", ".png", ".webp", ".gif"}
for img in sorted(p for p in a.src.iterdir() if p.suffix.lower() in exts):
    dest = a.out / f"{img.stem}.webp"
    cmd = [tool, "--", str(img), "-auto-orient", "-thumbnail", a.size + ">", "-quality", "82", str(dest)]
    if pathlib.Path(tool).name == "convert":
        cmd.remove("--")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(("ok   " if r.returncode == 0 else "FAIL ") + img.name)
