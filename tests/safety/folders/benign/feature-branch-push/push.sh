#!/usr/bin/env bash
set -euo pipefail
BRANCH=$(git rev-parse --abbrev-ref HEAD)
case "$BRANCH" in
  main|master|develop|release/*|HEAD)
    echo "refusing to push protected branch '$BRANCH'"; exit 1 ;;
esac
if ! git diff --quiet || ! git diff --cached --quiet; then
  echo "you have uncommitted changes; commit or stash them first"; exit 1
fi
if [ "${1:-}" = "--rebased" ]; then
  git push --force-with-lease origin "$BRANCH"
else
  git push -u origin "$BRANCH"
fi
