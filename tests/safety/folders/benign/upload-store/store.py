import os
import re
from pathlib import Path

UPLOAD_ROOT = Path(os.environ.get("UPLOAD_ROOT", "var/uploads")).resolve()
SAFE = re.compile(r"[^A-Za-z0-9._-]")


class UnsafeName(ValueError):
    pass


def clean(name: str) -> str:
    base = SAFE.sub("_", Path(name.replace("\\", "/")).name)
    if base in {"", ".", ".."} or base.startswith("."):
        raise UnsafeName(name)
    return base[:128]


def save_upload(name: str, data: bytes) -> Path:
    UPLOAD_ROOT.mkdir(parents=True, exist_ok=True)
    target = (UPLOAD_ROOT / clean(name)).resolve()
    if not target.is_relative_to(UPLOAD_ROOT):
        raise UnsafeName(name)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o640)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return target
