#!/usr/bin/env bash
set -euo pipefail
target=${1:?usage: forward.sh DB_HOST [PORT] [LOCAL_PORT]}
port=${2:-5432}
local_port=${3:-1$port}

[[ $target =~ ^[A-Za-z0-9.-]+$ ]] || { echo "bad host name: $target" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ && $local_port =~ ^[0-9]+$ ]] || { echo "ports must be numbers" >&2; exit 2; }

if ! ssh -G bastion >/dev/null 2>&1 || ! grep -qiE '^\s*Host\s+.*\bbastion\b' "$HOME/.ssh/config" 2>/dev/null; then
  echo "no 'Host bastion' entry in ~/.ssh/config; ask the user to add theirs first" >&2
  exit 1
fi

echo "forwarding 127.0.0.1:$local_port -> $target:$port via bastion (Ctrl-C to stop)"
exec ssh -N -o ExitOnForwardFailure=yes -L "127.0.0.1:$local_port:$target:$port" bastion
