import re
import subprocess
from collections import defaultdict


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


last = git("describe", "--tags", "--abbrev=0")
lines = git("log", f"{last}..HEAD", "--pretty=%s").splitlines()
groups = defaultdict(list)
for s in lines:
    m = re.match(r"^(\w+)(\([^)]*\))?!?:\s*(.+)$", s)
    kind = {"feat": "Features", "fix": "Fixes"}.get(m.group(1), "Other") if m else "Other"
    groups[kind].append(m.group(3) if m else s)

print(f"## Unreleased (since {last})\n")
for kind in ("Features", "Fixes", "Other"):
    if groups[kind]:
        print(f"### {kind}\n")
        print("\n".join(f"- {x}" for x in groups[kind]))
        print()
