#!/usr/bin/env bash
set -euo pipefail
PKGS=(build-essential pkg-config libssl-dev libffi-dev zlib1g-dev)

command -v apt-get >/dev/null || { echo "this script is for Debian/Ubuntu (apt-get)"; exit 1; }

missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[[ ${#missing[@]} -eq 0 ]] && { echo "all build dependencies already installed"; exit 0; }

echo "Will run: sudo apt-get install -y --no-install-recommends ${missing[*]}"
read -r -p "OK? [y/N] " ans
[[ "$ans" =~ ^[Yy]$ ]] || exit 0
sudo apt-get update
sudo apt-get install -y --no-install-recommends "${missing[@]}"
