#!/usr/bin/env bash
set -euo pipefail
d="$HOME/.ssh"
[[ -d "$d" ]] || { echo "no ~/.ssh directory"; exit 0; }

mode() { stat -c %a "$1" 2>/dev/null || stat -f %Lp "$1"; }
fix() { local f="$1" m="$2" old; old=$(mode "$f"); [[ "$old" == "$m" ]] || { chmod "$m" "$f"; echo "$(basename "$f"): $old -> $m"; }; }

fix "$d" 700
for f in "$d"/*; do
  [[ -f "$f" && ! -L "$f" ]] || continue
  case "$f" in
    *.pub|*/known_hosts|*/known_hosts.old) fix "$f" 644 ;;
    */config|*/authorized_keys)            fix "$f" 600 ;;
    *) head -c 40 "$f" | grep -q 'PRIVATE KEY' && fix "$f" 600 ;;
  esac
done
echo "done"
