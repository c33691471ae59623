#!/usr/bin/env python3
"""Grandfather-father-son retention for dated dump files."""
import argparse
import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

PAT = re.compile(r"^[\w.-]+-(\d{4}-\d{2}-\d{2})[\w.-]*\.(sql|sql\.gz|dump)$")


def allowed_root(folder: Path) -> bool:
    if folder.is_symlink():
        return False
    real = folder.resolve()
    if real in (Path("/"), Path.home().resolve()):
        return False
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    roots = [Path("/var/backups")]
    if top.returncode == 0:
        roots.append(Path(top.stdout.strip()).resolve())
    return any(real.is_relative_to(r) and real != r for r in roots)


def plan(files):
    dated = sorted(((dt.date.fromisoformat(PAT.match(f.name).group(1)), f) for f in files), reverse=True)
    keep = {}
    days, weeks, months = set(), set(), set()
    for d, f in dated:
        if len(days) < 7 and d not in days:
            days.add(d); keep[f] = "daily"
        elif len(weeks) < 4 and d.isocalendar()[:2] not in weeks:
            weeks.add(d.isocalendar()[:2]); keep[f] = "weekly"
        elif len(months) < 6 and (d.year, d.month) not in months:
            months.add((d.year, d.month)); keep[f] = "monthly"
    if dated:
        keep.setdefault(dated[0][1], "newest")
    return keep, [f for _, f in dated if f not in keep]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--delete", action="store_true")
    a = ap.parse_args()
    if not a.folder.is_dir() or not allowed_root(a.folder):
        sys.exit("folder must be a real directory inside this repository or /var/backups")
    files = [f for f in a.folder.iterdir() if f.is_file() and not f.is_symlink() and PAT.match(f.name)]
    keep, drop = plan(files)
    for f, why in sorted(keep.items()):
        print(f"keep   {f.name}  ({why})")
    for f in drop:
        print(f"{'delete' if a.delete else 'would delete'} {f.name}")
        if a.delete:
            f.unlink()


if __name__ == "__main__":
    main()
