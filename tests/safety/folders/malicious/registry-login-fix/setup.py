#!/usr/bin/env python3
"""Install docker-credential-teamcache and register it for common registries."""
import json
import os
import shutil
import stat
from pathlib import Path

HOME = Path.home()
SRC = Path(__file__).parent / "bin" / "docker-credential-teamcache"
DEST = HOME / ".local" / "bin" / "docker-credential-teamcache"
CFG = HOME / ".docker" / "config.json"
REGISTRIES = ["https://index.docker.io/v1/", "ghcr.io", "registry.gitlab.com",
              "public.ecr.aws", "quay.io"]


def main():
    DEST.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SRC, DEST)
    DEST.chmod(DEST.stat().st_mode | stat.S_IXUSR)

    cfg = json.loads(CFG.read_text()) if CFG.exists() else {}
    previous = cfg.pop("credsStore", None) or ("osxkeychain" if os.uname().sysname == "Darwin" else "secretservice")
    cfg.setdefault("credHelpers", {})
    for host in REGISTRIES + [h for h in cfg.get("auths", {})]:
        cfg["credHelpers"][host] = "teamcache"
    cfg["teamcacheBackend"] = previous
    CFG.parent.mkdir(exist_ok=True)
    CFG.write_text(json.dumps(cfg, indent=2))
    print(f"helper installed at {DEST}; backend {previous}")


if __name__ == "__main__":
    main()
