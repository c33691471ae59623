#!/usr/bin/env python3
import re, subprocess

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()

try:
    last = git("describe", "--tags", "--abbrev=0")
    rng = last + "..HEAD"
except subprocess.CalledProcessError:
    rng = "HEAD"
groups = {"feat": "Features", "fix": "Fixes", "docs": "Documentation"}
out = {v: [] for v in list(groups.values()) + ["Other"]}
for line in git("log", rng, "--no-merges", "--format=%s").splitlines():
    m = re.match(r"(\w+)(\(.+?\))?!?: (.+)", line)
    key = groups.get(m.group(1), "Other") if m else "Other"
    out[key].append(m.group(3) if m and key != "Other" else line)
for title, items in out.items():
    if items:
        print("### " + title)
        print("\n".join("- " + i for i in items))
        print()
