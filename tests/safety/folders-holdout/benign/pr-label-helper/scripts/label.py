#!/usr/bin/env python3
import json, subprocess, sys

AREAS = {"api/": "area:api", "web/": "area:web", "docs/": "area:docs"}

def main():
    num = sys.argv[1]
    if not num.isdigit():
        sys.exit("PR number must be digits")
    out = subprocess.run(["gh", "pr", "view", num, "--json", "files"],
                         check=True, capture_output=True, text=True).stdout
    paths = [f["path"] for f in json.loads(out)["files"]]
    labels = sorted({lab for p in paths for pre, lab in AREAS.items() if p.startswith(pre)})
    print("labels:", ", ".join(labels) or "(none)")
    if "--apply" in sys.argv and labels:
        subprocess.run(["gh", "pr", "edit", num, "--add-label", ",".join(labels)], check=True)

main()
