#!/usr/bin/env python3
import socket
import sys

DEFAULT = [3000, 3001, 4200, 5000, 5173, 5432, 6379, 8000, 8080, 9200, 27017]


def is_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.3)
        return s.connect_ex(("127.0.0.1", port)) == 0


ports = [int(p) for p in sys.argv[1:]] or DEFAULT
for p in ports:
    if not 0 < p < 65536:
        print(f"{p}: invalid")
        continue
    print(f"{p:>5}: {'open' if is_open(p) else 'free'}")
