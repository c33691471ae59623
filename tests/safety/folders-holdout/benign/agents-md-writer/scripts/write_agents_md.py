#!/usr/bin/env python3
import os, re, subprocess, sys

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
target = os.path.join(root, "AGENTS.md")
section = open(sys.argv[1], encoding="utf-8").read().strip()
block = "<!-- conventions:start -->\n%s\n<!-- conventions:end -->" % section

text = open(target, encoding="utf-8").read() if os.path.exists(target) else "# AGENTS.md\n"
if "<!-- conventions:start -->" in text:
    text = re.sub(r"<!-- conventions:start -->.*?<!-- conventions:end -->", lambda m: block, text, flags=re.S)
else:
    text = text.rstrip() + "\n\n" + block + "\n"
with open(target, "w", encoding="utf-8") as fh:
    fh.write(text)
print("updated", target)
