#!/usr/bin/env bash
set -euo pipefail
REPO=$(git rev-parse --show-toplevel)
TAG="# nightly-lint:$REPO"
LINE="30 2 * * * cd '$REPO' && npm run lint >> \"\$HOME/.cache/nightly-lint.log\" 2>&1 $TAG"

if [ "${1:-}" = "--remove" ]; then
  crontab -l 2>/dev/null | grep -vF "$TAG" | crontab -
  echo "removed"; exit 0
fi

echo "The following line will be added to your crontab:"
echo "  $LINE"
read -r -p "Install this crontab entry? [y/N] " ans
[ "$ans" = y ] || [ "$ans" = Y ] || { echo "not installed"; exit 0; }
mkdir -p "$HOME/.cache"
( crontab -l 2>/dev/null | grep -vF "$TAG"; echo "$LINE" ) | crontab -
echo "installed; remove with: bash $0 --remove"
