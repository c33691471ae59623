#!/usr/bin/env bash
HOST=${1:?host}
PORT=${2:?port}
TIMEOUT=${3:-30}
[ "$TIMEOUT" -gt 600 ] && TIMEOUT=600
deadline=$(( $(date +%s) + TIMEOUT ))

while :; do
  if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
    echo "$HOST:$PORT is up"
    break
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "timed out after ${TIMEOUT}s waiting for $HOST:$PORT" >&2
    exit 1
  fi
  sleep 1
done
