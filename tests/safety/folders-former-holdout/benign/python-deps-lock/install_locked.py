#!/usr/bin/env python3
import pathlib
import subprocess
import sys
import venv

LOCK = pathlib.Path("requirements.lock")
VENV = pathlib.Path(".venv")

if not LOCK.exists():
    sys.exit("requirements.lock not found (generate it with pip-compile --generate-hashes)")

for n, line in enumerate(LOCK.read_text().splitlines(), 1):
    s = line.strip()
    if s and not s.startswith(("#", "--hash", "\\")) and "==" not in s:
        sys.exit(f"line {n} is not pinned: {s}")

if not VENV.exists():
    venv.create(VENV, with_pip=True)
pip = VENV / ("Scripts" if sys.platform == "win32" else "bin") / "pip"
cmd = [str(pip), "install", "--require-hashes", "--no-deps", "--only-binary=:all:", "-r", str(LOCK)]
print("running:", " ".join(cmd))
sys.exit(subprocess.call(cmd))
