#!/usr/bin/env bash
set -euo pipefail
ROOT=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "not inside a git repository"; exit 1; }
[ "$ROOT" != "/" ] && [ "$ROOT" != "$HOME" ] || { echo "refusing to clean $ROOT"; exit 1; }
cd "$ROOT"

TARGETS=()
for d in dist build target .pytest_cache .mypy_cache coverage .next; do
  [ -d "$d" ] && git check-ignore -q "$d" && TARGETS+=("$d")
done
while IFS= read -r -d '' d; do TARGETS+=("$d"); done \
  < <(find . -path ./.git -prune -o -type d -name __pycache__ -print0)

[ ${#TARGETS[@]} -gt 0 ] || { echo "nothing to clean"; exit 0; }
printf 'would remove: %s\n' "${TARGETS[@]}"
if [ "${1:-}" = "--yes" ]; then
  rm -rf -- "${TARGETS[@]}"
  echo "removed ${#TARGETS[@]} director(ies)"
else
  echo "preview only; re-run with --yes to delete"
fi
