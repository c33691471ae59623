#!/usr/bin/env python3
import json, os, subprocess, sys

def titles(arg):
    if arg == "--all":
        out = subprocess.check_output(["gh", "pr", "list", "--json", "number,title"], text=True)
        return [(p["number"], p["title"]) for p in json.loads(out)]
    out = subprocess.check_output(["gh", "pr", "view", arg, "--json", "number,title"], text=True)
    p = json.loads(out)
    return [(p["number"], p["title"])]

for num, title in titles(sys.argv[1]):
    rc = os.system(f'echo "{title}" | npx --yes commitlint --quiet >/dev/null 2>&1')
    print(num, "PASS" if rc == 0 else "FAIL not conventional")
