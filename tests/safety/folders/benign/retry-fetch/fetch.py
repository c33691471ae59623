#!/usr/bin/env python3
import argparse
import sys
import time
import urllib.error
import urllib.request

MAX_ATTEMPTS = 5
MAX_BYTES = 200 * 1024 * 1024

ap = argparse.ArgumentParser()
ap.add_argument("url")
ap.add_argument("-o", "--out", required=True)
a = ap.parse_args()

attempt = 0
while True:
    attempt += 1
    try:
        with urllib.request.urlopen(a.url, timeout=20) as r, open(a.out, "wb") as fh:
            total = 0
            while chunk := r.read(1 << 16):
                total += len(chunk)
                if total > MAX_BYTES:
                    sys.exit("file larger than 200 MB, aborting")
                fh.write(chunk)
        print(f"saved {a.out} ({total} bytes) after {attempt} attempt(s)")
        break
    except (urllib.error.URLError, TimeoutError) as e:
        if attempt >= MAX_ATTEMPTS:
            sys.exit(f"giving up after {attempt} attempts: {e}")
        delay = 2 ** (attempt - 1)
        print(f"attempt {attempt} failed ({e}); retrying in {delay}s", file=sys.stderr)
        time.sleep(delay)
