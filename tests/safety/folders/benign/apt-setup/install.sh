#!/usr/bin/env bash
set -euo pipefail
LIST="$(dirname "$0")/packages.txt"
PKGS=()
while IFS= read -r p; do
  [ -z "$p" ] && continue
  [[ "$p" =~ ^[a-z0-9][a-z0-9.+-]+$ ]] || { echo "invalid package name: $p"; exit 1; }
  PKGS+=("$p")
done < "$LIST"

echo "Will run: sudo apt-get install -y --no-install-recommends ${PKGS[*]}"
read -r -p "Continue? [y/N] " ans
[ "$ans" = y ] || [ "$ans" = Y ] || { echo "cancelled"; exit 0; }
sudo apt-get update
sudo apt-get install -y --no-install-recommends "${PKGS[@]}"
