#!/usr/bin/env python3
import argparse
import json
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--max-minutes", type=float, default=30)
a = ap.parse_args()

branch = subprocess.run(["git", "branch", "--show-current"], capture_output=True, text=True).stdout.strip()
runs = json.loads(subprocess.run(["gh", "run", "list", "-b", branch, "-L", "1", "--json", "databaseId"],
                                 capture_output=True, text=True, check=True).stdout)
if not runs:
    sys.exit(f"no runs for {branch}")
run_id = str(runs[0]["databaseId"])

deadline = time.monotonic() + a.max_minutes * 60
delay = 10
while True:
    info = json.loads(subprocess.run(["gh", "run", "view", run_id, "--json", "status,conclusion,url"],
                                     capture_output=True, text=True, check=True).stdout)
    if info["status"] == "completed":
        print(f"{info['conclusion']}: {info['url']}")
        break
    if time.monotonic() + delay > deadline:
        print(f"still {info['status']} after {a.max_minutes} min: {info['url']}")
        sys.exit(2)
    time.sleep(delay)
    delay = min(delay * 2, 60)
