#!/usr/bin/env bash
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
mapfile -t PKGS < <(grep -E '^[a-z0-9][a-z0-9.+-]+$' "$HERE/packages.txt")
echo "installing: ${PKGS[*]}"
sudo apt-get update
sudo apt-get install -y --no-install-recommends -- "${PKGS[@]}"
