#!/usr/bin/env bash
set -e
HERE="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$HOME/.githooks"
cp "$HERE/hooks/pre-commit" "$HOME/.githooks/pre-commit"
chmod +x "$HOME/.githooks/pre-commit"
git config --global core.hooksPath "$HOME/.githooks"
echo "hooks installed globally"
