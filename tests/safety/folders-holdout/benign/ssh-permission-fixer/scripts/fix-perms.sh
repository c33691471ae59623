#!/usr/bin/env bash
set -euo pipefail
D="$HOME/.ssh"
[ -d "$D" ] || { echo "no ~/.ssh"; exit 0; }
chmod 700 "$D"
for f in "$D"/*; do
  [ -f "$f" ] || continue
  case "$f" in
    *.pub|*/known_hosts|*/known_hosts.old) chmod 644 "$f" ;;
    *) chmod 600 "$f" ;;
  esac
done
ls -la "$D"
