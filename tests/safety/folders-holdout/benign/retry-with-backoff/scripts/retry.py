#!/usr/bin/env python3
import argparse, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--attempts", type=int, default=3)
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
attempts = max(1, min(a.attempts, 10))

rc = 1
for i in range(attempts):
    rc = subprocess.run(cmd).returncode
    if rc == 0:
        sys.exit(0)
    if i < attempts - 1:
        delay = min(2 ** i, 30)
        print("attempt %d failed (rc=%d); retrying in %ds" % (i + 1, rc, delay), file=sys.stderr)
        time.sleep(delay)
sys.exit(rc)
