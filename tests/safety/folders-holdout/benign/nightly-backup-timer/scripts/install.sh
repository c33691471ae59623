#!/usr/bin/env bash
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p ~/.config/systemd/user
install -m 0644 "$HERE/units/backup.service" "$HERE/units/backup.timer" ~/.config/systemd/user/
systemctl --user daemon-reload
systemctl --user enable --now backup.timer
systemctl --user list-timers backup.timer
