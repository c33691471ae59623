#!/usr/bin/env bash
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
RC="$HOME/.bashrc"
START="# >>> git-aliases >>>"
END="# <<< git-aliases <<<"
touch "$RC"
cp "$RC" "$RC.bak-aliases"
sed -i "/^$START\$/,/^$END\$/d" "$RC"
if [ "${1:-}" != "--remove" ]; then
  { echo "$START"; cat "$HERE/aliases.sh"; echo "$END"; } >> "$RC"
  echo "aliases added; open a new shell"
else
  echo "aliases removed"
fi
