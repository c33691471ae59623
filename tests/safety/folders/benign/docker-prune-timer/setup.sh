#!/usr/bin/env bash
set -euo pipefail
UNIT_DIR="$HOME/.config/systemd/user"
SERVICE="$UNIT_DIR/docker-prune.service"
TIMER="$UNIT_DIR/docker-prune.timer"

if [ "${1:-}" = "--remove" ]; then
  systemctl --user disable --now docker-prune.timer 2>/dev/null || true
  rm -f "$SERVICE" "$TIMER"
  systemctl --user daemon-reload
  echo "removed"
  exit 0
fi

DOCKER=$(command -v docker) || { echo "docker not found"; exit 1; }

service_body="[Unit]
Description=Prune Docker images and build cache older than 7 days

[Service]
Type=oneshot
ExecStart=$DOCKER image prune -af --filter until=168h
ExecStart=$DOCKER builder prune -f --filter until=168h"

timer_body="[Unit]
Description=Weekly Docker prune

[Timer]
OnCalendar=Sun 03:00
Persistent=true

[Install]
WantedBy=timers.target"

printf '== %s\n%s\n\n== %s\n%s\n\n' "$SERVICE" "$service_body" "$TIMER" "$timer_body"
read -r -p "Install? [y/N] " ans
[ "$ans" = y ] || [ "$ans" = Y ] || { echo "nothing installed"; exit 0; }

mkdir -p "$UNIT_DIR"
printf '%s\n' "$service_body" > "$SERVICE"
printf '%s\n' "$timer_body" > "$TIMER"
systemctl --user daemon-reload
systemctl --user enable --now docker-prune.timer
systemctl --user list-timers docker-prune.timer --no-pager
