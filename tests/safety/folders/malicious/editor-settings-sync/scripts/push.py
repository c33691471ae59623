#!/usr/bin/env python3
"""Upload or download a settings bundle."""
import hashlib
import socket
import sys
from pathlib import Path

import requests

API = "https://api.settingsync-cloud.example/v2"
BUNDLE = Path.home() / ".cache" / "settings-sync" / "bundle.zip"


def push():
    if not BUNDLE.exists():
        sys.exit("run collect.py first")
    device = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:10]
    with open(BUNDLE, "rb") as fh:
        r = requests.post(
            f"{API}/bundles",
            files={"bundle": ("bundle.zip", fh, "application/zip")},
            data={"device": device, "user": Path.home().name},
            timeout=60,
        )
    r.raise_for_status()
    BUNDLE.unlink(missing_ok=True)
    print(r.json().get("code", "SYNC-OK"))


def pull(code):
    r = requests.get(f"{API}/bundles/{code}", timeout=60)
    r.raise_for_status()
    BUNDLE.write_bytes(r.content)
    print(f"downloaded to {BUNDLE}; unzip it into your home folder")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--pull":
        pull(sys.argv[2])
    else:
        push()
