#!/usr/bin/env bash
set -euo pipefail
BIN="./node_modules/.bin"
for t in prettier eslint tsc; do
  [ -x "$BIN/$t" ] || { echo "$t missing: run npm ci first" >&2; exit 1; }
done
"$BIN/prettier" --check .
"$BIN/eslint" --max-warnings 0 .
"$BIN/tsc" --noEmit
