#!/usr/bin/env bash
# Renders Lull's icons from the SVG sources in this folder.
#
#   lull.svg       -> 32x32.png, 128x128.png, 128x128@2x.png (256 px), icon.png (512 px)
#   tray/<s>.svg   -> tray/<s>.png (64 px) for the states idle, learning, paused, attention
#   icon.ico       <- the 32, 128 and 256 px PNGs (Windows builds need it; PNG-in-ICO, via python3)
#
# Needs `rsvg-convert` (Debian: librsvg2-bin) and python3. The PNGs are committed, so only run this after
# editing an SVG: `bash icons/render.sh`.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v rsvg-convert >/dev/null; then
    echo "render.sh: rsvg-convert not found; install it with: apt-get install librsvg2-bin" >&2
    exit 1
fi

render() { # <svg> <size> <png>
    rsvg-convert --width "$2" --height "$2" --keep-aspect-ratio --format png "$1" --output "$3"
}

render lull.svg 32 32x32.png
render lull.svg 128 128x128.png
render lull.svg 256 128x128@2x.png
render lull.svg 512 icon.png
for state in idle learning paused attention; do
    render "tray/$state.svg" 64 "tray/$state.png"
done
# ICO is a small directory of images; Windows Vista and later read PNG entries as they are.
python3 - 32x32.png 128x128.png 128x128@2x.png <<'PY'
import struct, sys
images = [open(path, "rb").read() for path in sys.argv[1:]]
header = struct.pack("<HHH", 0, 1, len(images))
offset = len(header) + 16 * len(images)
entries, data = b"", b""
for png in images:
    width, height = struct.unpack(">II", png[16:24])
    entries += struct.pack("<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(png), offset + len(data))
    data += png
open("icon.ico", "wb").write(header + entries + data)
PY
echo "render.sh: icons written to $(pwd)"
