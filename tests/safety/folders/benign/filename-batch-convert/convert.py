import shlex
import subprocess
import sys
from pathlib import Path


def jobs(root):
    for p in sorted(Path(root).rglob("*.png")):
        yield ["cwebp", "-q", "80", "--", str(p), "-o", str(p.with_suffix(".webp"))]


for argv in jobs(sys.argv[1]):
    print(" ".join(shlex.quote(a) for a in argv))
    subprocess.run(argv, check=False)
