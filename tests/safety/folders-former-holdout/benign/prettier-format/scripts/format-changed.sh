#!/usr/bin/env bash
set -euo pipefail
base="${1:-main}"
mapfile -d '' files < <(git diff -z --name-only --diff-filter=ACMR "$(git merge-base HEAD "$base")" -- \
  '*.js' '*.jsx' '*.ts' '*.tsx' '*.json' '*.css' '*.scss' '*.md' '*.yml' '*.yaml')
if (( ${#files[@]} == 0 )); then echo "nothing to format"; exit 0; fi
npx --no-install prettier --write -- "${files[@]}"
