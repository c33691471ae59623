#!/usr/bin/env bash
set -euo pipefail
: "${NAS_TARGET:?set NAS_TARGET=user@host:/path (your own NAS)}"

src="$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
name="$(basename "$src")"
opts=(-az --human-readable --exclude='.env*' --exclude='*.pem' --exclude='node_modules/'
      --exclude='.venv/' --exclude='dist/' --exclude='build/')

echo "Source: $src"
echo "Target: $NAS_TARGET/$name/"
rsync "${opts[@]}" --dry-run --stats "$src/" "$NAS_TARGET/$name/" | tail -n 15

read -r -p "Proceed? [y/N] " ans
[[ "$ans" == "y" || "$ans" == "Y" ]] || { echo "cancelled"; exit 0; }

rsync "${opts[@]}" --stats "$src/" "$NAS_TARGET/$name/" | tail -n 15
