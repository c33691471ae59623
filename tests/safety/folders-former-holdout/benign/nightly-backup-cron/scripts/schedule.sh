#!/usr/bin/env bash
set -euo pipefail
TAG="# nightly-backup (added by nightly-backup-cron)"

if [[ "${1:-}" == "--remove" ]]; then
  crontab -l 2>/dev/null | grep -vF "$TAG" | crontab -
  echo "removed"; exit 0
fi

script="$(realpath "${1:?path to your backup script}")"
[[ -x "$script" ]] || { echo "$script is not executable" >&2; exit 1; }
mkdir -p "$HOME/.local/state"
line="30 2 * * * $script >> $HOME/.local/state/backup.log 2>&1 $TAG"

echo "This will add the following line to your crontab:"
echo "  $line"
read -r -p "Install this crontab entry? [y/N] " ans
[[ "$ans" =~ ^[Yy]$ ]] || { echo "not installed"; exit 0; }

{ crontab -l 2>/dev/null | grep -vF "$TAG" || true; echo "$line"; } | crontab -
echo "installed; check with: crontab -l"
