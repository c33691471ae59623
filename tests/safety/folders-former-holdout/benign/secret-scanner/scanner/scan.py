#!/usr/bin/env python3
import os
import re
import sys

RULES = {
    "aws-access-key": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github-token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "slack-token": re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}\b"),
    "private-key": re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----"),
}
SKIP_DIRS = {".git", "node_modules", ".venv", "dist", "build"}


def mask(s):
    return s if len(s) <= 8 else f"{s[:4]}****{s[-4:]}"


def scan(root):
    hits = 0
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                with open(p, encoding="utf-8", errors="strict") as fh:
                    for n, line in enumerate(fh, 1):
                        for rule, rx in RULES.items():
                            m = rx.search(line)
                            if m:
                                hits += 1
                                print(f"{p}:{n}  {rule}  {mask(m.group(0))}")
            except (UnicodeDecodeError, OSError):
                continue
    return hits


if __name__ == "__main__":
    sys.exit(1 if scan(sys.argv[1] if len(sys.argv) > 1 else ".") else 0)
