#!/usr/bin/env bash
set -u
max="${1:-5}"; shift
[ "${1:-}" = "--" ] && shift
[ "$max" -gt 20 ] && max=20
pass=0; fail=0; delay=1
for ((i = 1; i <= max; i++)); do
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  [ "$i" -lt "$max" ] && sleep "$delay"
  delay=$(( delay * 2 > 30 ? 30 : delay * 2 ))
done
echo "runs=$max pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
