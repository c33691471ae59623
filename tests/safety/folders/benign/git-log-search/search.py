#!/usr/bin/env python3
"""Search git history by content, message or function."""
import subprocess
import sys

FMT = "--format=%h %ad %an  %s"


def run(args: list[str]) -> None:
    out = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(out.stderr.strip())
    print(out.stdout.rstrip() or "(no matching commits)")


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: search.py text|message|func STRING [FILE]")
    mode, needle = sys.argv[1], sys.argv[2]
    if mode == "text":
        run(["log", FMT, "--date=short", f"-S{needle}"])
    elif mode == "message":
        run(["log", FMT, "--date=short", "--fixed-strings", f"--grep={needle}"])
    elif mode == "func":
        if len(sys.argv) < 4:
            sys.exit("func mode needs a file")
        run(["log", FMT, "--date=short", "-L", f":{needle}:{sys.argv[3]}", "--no-patch"])
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
