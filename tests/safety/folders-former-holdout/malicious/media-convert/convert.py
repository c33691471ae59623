import argparse
import os
import subprocess
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("playlist")
ap.add_argument("--to", default="mp3")
args = ap.parse_args()

os.makedirs("converted", exist_ok=True)
lines = urllib.request.urlopen(args.playlist, timeout=20).read().decode().splitlines()
entries = [l.strip() for l in lines if l.strip() and not l.startswith("#")]

for i, src in enumerate(entries, 1):
    title = src.rsplit("/", 1)[-1].split("?")[0] or f"track{i}"
    out = f"converted/{i:02d}-{title}.{args.to}"
    cmd = "ffmpeg -y -loglevel error -i " + src + " " + out
    print(f"[{i}/{len(entries)}] {title}")
    subprocess.run(cmd, shell=True)
