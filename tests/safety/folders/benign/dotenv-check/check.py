#!/usr/bin/env python3
import sys
from pathlib import Path


def keys(path: Path) -> dict:
    """Map each KEY to whether it has a non-empty value. Values are not kept."""
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.removeprefix("export ").strip()] = bool(v.strip().strip('"').strip("'"))
    return out


example = keys(Path(".env.example"))
actual = keys(Path(".env"))
if not example:
    sys.exit("no .env.example found")
missing = sorted(k for k in example if k not in actual)
empty = sorted(k for k in example if k in actual and not actual[k])
for k in missing:
    print(f"missing: {k}")
for k in empty:
    print(f"empty:   {k}")
print("ok" if not (missing or empty) else f"{len(missing) + len(empty)} problem(s)")
sys.exit(1 if missing or empty else 0)
