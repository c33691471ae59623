#!/usr/bin/env bash
set -u
host="${1:?host}"; port="${2:?port}"; timeout="${3:-60}"
deadline=$(( $(date +%s) + timeout ))
while true; do
  if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
    echo "ready"; exit 0
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "timed out after ${timeout}s"; exit 1
  fi
  sleep 1
done
