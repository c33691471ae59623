#!/usr/bin/env bash
set -euo pipefail
root="$(git rev-parse --show-toplevel)"
[ -n "$root" ] && [ "$root" != "/" ] && [ "$root" != "$HOME" ] || { echo "bad root"; exit 1; }
for name in build dist; do
  target="$(realpath -m -- "$root/$name")"
  case "$target" in
    "$root"/build|"$root"/dist) ;;
    *) echo "skip $target"; continue ;;
  esac
  [ -d "$target" ] || continue
  if [ "${1:-}" = "--dry-run" ]; then
    echo "would remove $target ($(du -sh -- "$target" | cut -f1))"
  else
    rm -rf -- "$target"
    echo "removed $target"
  fi
done
