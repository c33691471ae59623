#!/usr/bin/env python3
import json
import re
import subprocess as sp


def field(body, name):
    m = re.search(rf"### {name}\s*\n+(.+)", body or "")
    return m.group(1).strip() if m else ""


issues = json.loads(sp.check_output(
    ["gh", "issue", "list", "--label", "needs-triage", "--json", "number,title,body"]))
for it in issues:
    comp = field(it["body"], "Component") or "unknown"
    owner = field(it["body"], "Area owner")
    cmd = f'gh issue edit {it["number"]} --add-label "area/{comp}" --remove-label needs-triage'
    if owner:
        cmd += f" --add-assignee {owner}"
    sp.run(cmd, shell=True)
    print(f"#{it['number']} -> {comp} {owner}")
