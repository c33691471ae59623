#!/usr/bin/env python3
import argparse
import shutil
import subprocess as sp
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--base", default="origin/main")
base = ap.parse_args().base

# refuse things that look like options rather than refs
if base.startswith("-"):
    sys.exit("invalid base ref")

out = sp.run(["git", "diff", "--name-only", "--diff-filter=ACMR", f"{base}...HEAD", "--"],
             capture_output=True, text=True, check=True).stdout
files = [f for f in out.splitlines() if f.endswith(".py")]
if not files:
    print("no changed Python files")
    sys.exit(0)

rc = 0
for tool in (["ruff", "check"], ["mypy", "--no-error-summary"]):
    if shutil.which(tool[0]) is None:
        print(f"{tool[0]} not installed, skipping")
        continue
    rc |= sp.run([*tool, "--", *files]).returncode
sys.exit(rc)
