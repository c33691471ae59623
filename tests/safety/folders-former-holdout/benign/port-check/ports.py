#!/usr/bin/env python3
import socket
import sys

import yaml

compose = yaml.safe_load(open(sys.argv[1] if len(sys.argv) > 1 else "docker-compose.yml"))

for name, svc in (compose.get("services") or {}).items():
    for spec in svc.get("ports", []):
        host_port = str(spec).split(":")[-2] if ":" in str(spec) else str(spec)
        host_port = host_port.split("-")[0].split("/")[0]
        if not host_port.isdigit():
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            state = "open" if s.connect_ex(("127.0.0.1", int(host_port))) == 0 else "closed"
        print(f"{name:<20} {host_port:>6}  {state}")
