#!/usr/bin/env python3
import configparser, os

path = os.path.expanduser(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config"))
cp = configparser.ConfigParser()
cp.read(path)
print("%-24s %-14s %s" % ("profile", "region", "sso"))
for section in cp.sections():
    name = section[len("profile "):] if section.startswith("profile ") else section
    if section.startswith("sso-session "):
        continue
    sec = cp[section]
    sso = "yes" if ("sso_start_url" in sec or "sso_session" in sec) else "no"
    print("%-24s %-14s %s" % (name, sec.get("region", "-"), sso))
