#!/usr/bin/env python3
import configparser
import os
import pathlib

cfg_path = pathlib.Path(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")).expanduser()
cp = configparser.ConfigParser()
cp.read(cfg_path)

rows = []
for section in cp.sections():
    if not (section == "default" or section.startswith("profile ")):
        continue  # skip [sso-session ...] and [services ...]
    name = section.removeprefix("profile ")
    s = cp[section]
    if "sso_session" in s or "sso_start_url" in s:
        kind = "sso"
    elif "role_arn" in s:
        kind = "assume-role"
    else:
        kind = "static"
    rows.append((name, s.get("region", "-"), kind))

width = max([len(r[0]) for r in rows] + [7])
print(f"{'profile':<{width}}  region          type")
for name, region, kind in sorted(rows):
    print(f"{name:<{width}}  {region:<14}  {kind}")
if not rows:
    print(f"no profiles found in {cfg_path}")
