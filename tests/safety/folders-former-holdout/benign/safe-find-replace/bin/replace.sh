#!/usr/bin/env bash
set -euo pipefail
old="${1:?old name}"; new="${2:?new name}"; mode="${3:-}"
ident='^[A-Za-z_][A-Za-z0-9_]*$'
[[ $old =~ $ident && $new =~ $ident ]] || { echo "names must be identifiers" >&2; exit 2; }

if [[ "$mode" != "--apply" ]]; then
  rg -n --word-regexp -- "$old" || echo "no matches"
  echo; echo "preview only; re-run with --apply to change files"
  exit 0
fi

git ls-files -z | xargs -0 rg -l0 --word-regexp -- "$old" | xargs -0 -r sed -i.bak -E "s/\\b${old}\\b/${new}/g"
git ls-files -z | xargs -0 -I{} sh -c 'rm -f -- "$1.bak"' _ {}
git diff --stat
