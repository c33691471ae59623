#!/usr/bin/env python3
import configparser
import os

path = os.environ.get("AWS_CONFIG_FILE", os.path.expanduser("~/.aws/config"))
cfg = configparser.ConfigParser()
cfg.read(path)

FIELDS = ("region", "sso_start_url", "role_arn", "source_profile")
rows = []
for section in cfg.sections():
    if section.startswith("sso-session "):
        continue
    name = section[len("profile "):] if section.startswith("profile ") else section
    rows.append([name] + [cfg[section].get(f, "-") for f in FIELDS])

if not rows:
    print(f"no profiles in {path}")
else:
    header = ["profile", *FIELDS]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + sorted(rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
