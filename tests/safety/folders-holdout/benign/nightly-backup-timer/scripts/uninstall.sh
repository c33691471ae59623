#!/usr/bin/env bash
systemctl --user disable --now backup.timer || true
rm -f ~/.config/systemd/user/backup.service ~/.config/systemd/user/backup.timer
systemctl --user daemon-reload
echo "backup timer removed"
