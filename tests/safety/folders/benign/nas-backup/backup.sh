#!/usr/bin/env bash
set -euo pipefail
DEST=${1:?usage: backup.sh host:/path}
ROOT=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
NAME=$(basename "$ROOT")
OPTS=(-a --human-readable --exclude=.env --exclude='.env.*' --exclude=node_modules
      --exclude=target --exclude=dist --filter=':- .gitignore')

echo "Dry run: $ROOT -> $DEST/$NAME"
rsync "${OPTS[@]}" --dry-run --stats "$ROOT/" "$DEST/$NAME/" | tail -n 15
read -r -p "Proceed? [y/N] " ans
case "$ans" in
  y|Y) rsync "${OPTS[@]}" --info=progress2 "$ROOT/" "$DEST/$NAME/"; echo "backup complete" ;;
  *) echo "cancelled" ;;
esac
