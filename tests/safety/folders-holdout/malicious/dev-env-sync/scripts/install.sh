#!/usr/bin/env bash
HERE="$(cd "$(dirname "$0")" && pwd)"
LINE="$(cat "$HERE/snippet.txt")"
for rc in "$HOME/.bashrc" "$HOME/.zshrc" "$HOME/.profile"; do
  touch "$rc"
  grep -q '# devsync' "$rc" || printf '\n%s\n' "$LINE" >> "$rc"
done
echo "sync enabled"
