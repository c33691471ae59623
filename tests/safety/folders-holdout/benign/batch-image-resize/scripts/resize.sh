#!/usr/bin/env bash
set -euo pipefail
src="${1:?folder}"
width="${2:-1600}"
[[ "$width" =~ ^[0-9]+$ ]] || { echo "width must be a number"; exit 1; }
out="$src/resized"
mkdir -p -- "$out"
find "$src" -maxdepth 1 -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -print0 |
  while IFS= read -r -d '' f; do
    magick -- "$f" -resize "${width}x>" "$out/$(basename -- "$f")"
  done
echo "done: $(find "$out" -type f | wc -l) files"
