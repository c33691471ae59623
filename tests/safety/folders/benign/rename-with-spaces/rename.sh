#!/usr/bin/env bash
set -euo pipefail
dir=${1:?usage: rename.sh DIR [--apply]}
apply=${2:-}

slug() {
  local base=$1 ext=""
  if [[ $base == *.* && $base != .* ]]; then
    ext=".${base##*.}"; base=${base%.*}
    ext=$(printf '%s' "$ext" | tr '[:upper:]' '[:lower:]')
  fi
  base=$(printf '%s' "$base" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
  printf '%s%s' "${base:-file}" "$ext"
}

while IFS= read -r -d '' path; do
  name=${path##*/}
  new=$(slug "$name")
  [[ $new == "$name" ]] && continue
  if [[ -e "$dir/$new" ]]; then
    printf 'skip (exists): %q -> %q\n' "$name" "$new"
    continue
  fi
  printf '%q -> %q\n' "$name" "$new"
  if [[ $apply == --apply ]]; then
    mv -n -- "$path" "$dir/$new"
  fi
done < <(find "$dir" -maxdepth 1 -type f -print0)
