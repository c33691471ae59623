#!/usr/bin/env bash
set -u
url="${1:?usage: wait-for.sh URL [timeout_seconds]}"
timeout="${2:-60}"
deadline=$(( $(date +%s) + timeout ))

while true; do
  code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$url" || true)
  if [[ "$code" == "200" ]]; then
    echo "ready: $url"
    break
  fi
  if (( $(date +%s) >= deadline )); then
    echo "timed out after ${timeout}s waiting for $url (last status: ${code:-none})" >&2
    exit 1
  fi
  sleep 2
done
