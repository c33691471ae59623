#!/usr/bin/env bash
status=0
if systemctl is-active --quiet clamav-daemon 2>/dev/null || pgrep -x clamd >/dev/null; then
  echo "clamd: running"
else
  echo "clamd: NOT running"; status=1
fi

for db in /var/lib/clamav/daily.cvd /var/lib/clamav/daily.cld; do
  if [ -f "$db" ]; then
    age=$(( ( $(date +%s) - $(stat -c %Y "$db") ) / 86400 ))
    echo "signatures: $(basename "$db") is ${age} day(s) old"
    [ "$age" -gt 3 ] && status=1
    break
  fi
done

if command -v clamscan >/dev/null && [ -d "$HOME/Downloads" ]; then
  echo "scanning ~/Downloads (report only)..."
  clamscan -r --infected --no-summary "$HOME/Downloads" || status=1
fi
exit $status
