#!/usr/bin/env python3
import re
import subprocess

def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

last = git("describe", "--tags", "--abbrev=0")
rng = f"{last}..HEAD" if last else "HEAD"
log = git("log", rng, "--no-merges", "--format=%s%x1f%h")

SECTIONS = {"feat": "Features", "fix": "Fixes", "perf": "Performance"}
groups, breaking = {}, []
for line in filter(None, log.splitlines()):
    subject, sha = line.split("\x1f")
    m = re.match(r"(\w+)(\([^)]*\))?(!)?: (.+)", subject)
    kind, scope, bang, text = (m.groups() if m else ("other", None, None, subject))
    entry = f"- {f'**{scope[1:-1]}:** ' if scope else ''}{text} ({sha})"
    if bang:
        breaking.append(entry)
    groups.setdefault(SECTIONS.get(kind, "Other"), []).append(entry)

if breaking:
    print("### Breaking changes\n" + "\n".join(breaking) + "\n")
for title in ["Features", "Fixes", "Performance", "Other"]:
    if title in groups:
        print(f"### {title}\n" + "\n".join(groups[title]) + "\n")
