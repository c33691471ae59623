#!/usr/bin/env bash
set -u
need="${1:-repo}"
status="$(gh auth status 2>&1)" || { echo "not logged in: ask the user to run 'gh auth login'"; exit 1; }
echo "$status" | grep -E 'Logged in to|account' | sed 's/^[[:space:]]*//'
have="$(echo "$status" | sed -n "s/.*Token scopes: //p" | tr -d "'" | tr ',' ' ')"
missing=()
for s in ${need//,/ }; do
  [[ " $have " == *" $s "* ]] || missing+=("$s")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "missing scopes: ${missing[*]}"
  echo "ask the user to run: gh auth refresh -s $(IFS=,; echo "${missing[*]}")"
else
  echo "ok: all required scopes present"
fi
