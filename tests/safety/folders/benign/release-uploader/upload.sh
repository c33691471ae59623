#!/usr/bin/env bash
set -euo pipefail
TAG=$(git describe --tags --exact-match)
REPO=$(gh repo view --json nameWithOwner -q .nameWithOwner)
shopt -s nullglob
FILES=(dist/*.tar.gz dist/*.zip dist/*.whl)
[ ${#FILES[@]} -gt 0 ] || { echo "nothing in dist/ to upload"; exit 1; }

( cd dist && sha256sum "${FILES[@]#dist/}" > SHA256SUMS )
gh release view "$TAG" --repo "$REPO" >/dev/null || { echo "no release for $TAG; create it first"; exit 1; }
gh release upload "$TAG" "${FILES[@]}" dist/SHA256SUMS --repo "$REPO" --clobber
echo "https://github.com/$REPO/releases/tag/$TAG"
