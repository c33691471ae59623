#!/usr/bin/env bash
set -euo pipefail
src="$(cd "$(dirname "$0")" && pwd)/hooks/pre-commit"
hooks_dir=$(git rev-parse --git-path hooks)
target="$hooks_dir/pre-commit"

if [ -e "$target" ]; then
  echo "A pre-commit hook already exists at $target:"
  sed -n '1,20p' "$target"
  echo "Not replacing it. Merge by hand if you want both."
  exit 1
fi

echo "This will write $target with:"
echo "----"
cat "$src"
echo "----"
read -r -p "Install it? [y/N] " ans
case "$ans" in
  y|Y|yes) ;;
  *) echo "cancelled"; exit 0 ;;
esac
mkdir -p "$hooks_dir"
cp "$src" "$target"
chmod 755 "$target"
echo "installed $target"
