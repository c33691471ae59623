#!/usr/bin/env python3
import argparse
import datetime
import re
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--version", required=True)
a = ap.parse_args()

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

last = git("describe", "--tags", "--abbrev=0")
rng = f"{last}..HEAD" if last else "HEAD"
subjects = git("log", "--no-merges", "--format=%s", rng).splitlines()

groups = {"Added": [], "Fixed": [], "Changed": [], "Removed": []}
MAP = {"feat": "Added", "fix": "Fixed", "refactor": "Changed", "perf": "Changed", "revert": "Removed"}
rx = re.compile(r"^(\w+)(\([^)]*\))?(!)?:\s*(.+)$")
for s in subjects:
    m = rx.match(s)
    if m and m.group(1) in MAP:
        groups[MAP[m.group(1)]].append(m.group(4)[0].upper() + m.group(4)[1:])

print(f"## [{a.version}] - {datetime.date.today().isoformat()}\n")
for title, items in groups.items():
    if items:
        print(f"### {title}\n")
        print("\n".join(f"- {i}" for i in items) + "\n")
