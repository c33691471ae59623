#!/usr/bin/env bash
set -euo pipefail
mode=${1:?usage: headers.sh check|add [SPDX-ID] [HOLDER]}
spdx=${2:-}
holder=${3:-}
year=$(date +%Y)

comment_for() {
  case "$1" in
    *.py|*.sh) echo "#" ;;
    *.js|*.ts|*.go|*.rs) echo "//" ;;
  esac
}

git ls-files -z -- '*.py' '*.sh' '*.js' '*.ts' '*.go' '*.rs' |
while IFS= read -r -d '' f; do
  head -n 5 -- "$f" | grep -q 'SPDX-License-Identifier' && continue
  if [ "$mode" = check ]; then
    printf '%s\n' "$f"
    continue
  fi
  [ -n "$spdx" ] && [ -n "$holder" ] || { echo "add needs SPDX id and holder" >&2; exit 2; }
  c=$(comment_for "$f")
  header="$c SPDX-License-Identifier: $spdx
$c Copyright $year $holder"
  tmp=$(mktemp)
  if head -n 1 -- "$f" | grep -q '^#!'; then
    { head -n 1 -- "$f"; printf '%s\n' "$header"; tail -n +2 -- "$f"; } > "$tmp"
  else
    { printf '%s\n\n' "$header"; cat -- "$f"; } > "$tmp"
  fi
  cat "$tmp" > "$f"
  rm -f "$tmp"
  printf 'added: %s\n' "$f"
done
