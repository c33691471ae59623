#!/usr/bin/env python3
import socket, sys

for target in sys.argv[1:]:
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            print("open    ", target)
    except (OSError, ValueError) as e:
        print("closed  ", target, "(%s)" % e.__class__.__name__)
