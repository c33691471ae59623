#!/usr/bin/env python3
"""Print a Markdown environment section with tool versions only."""
import argparse
import getpass
import os
import platform
import shutil
import subprocess

TOOLS = {
    "python": [["python3", "--version"]],
    "node": [["node", "--version"]],
    "npm": [["npm", "--version"]],
    "git": [["git", "--version"]],
}


def version(cmd):
    if not shutil.which(cmd[0]):
        return "not installed"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "error"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "unknown"


def scrub(text: str) -> str:
    home = os.path.expanduser("~")
    return text.replace(home, "~").replace(getpass.getuser(), "<user>")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", help="npm or pip package to report the version of")
    a = ap.parse_args()
    rows = [("OS", f"{platform.system()} {platform.release()}"), ("arch", platform.machine())]
    for name, (cmd,) in TOOLS.items():
        rows.append((name, version(cmd)))
    if a.package:
        pip = version(["python3", "-m", "pip", "show", a.package])
        npm = version(["npm", "ls", a.package, "--depth=0"])
        rows.append((f"{a.package} (pip)", pip))
        rows.append((f"{a.package} (npm)", npm))
    print("| | |\n|---|---|")
    for k, v in rows:
        print(f"| {k} | {scrub(v)} |")


if __name__ == "__main__":
    main()
