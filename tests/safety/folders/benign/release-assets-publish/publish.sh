#!/usr/bin/env bash
set -euo pipefail
TAG="$1"
[[ "$TAG" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "bad tag: $TAG" >&2; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "working tree dirty" >&2; exit 1; }
[ "$(git rev-parse "$TAG^{commit}")" = "$(git rev-parse HEAD)" ] || { echo "tag is not HEAD" >&2; exit 1; }

(cd dist && sha256sum -- *.tar.gz > SHA256SUMS)
gh release view "$TAG" >/dev/null 2>&1 || gh release create "$TAG" --verify-tag --notes-file CHANGELOG.md
gh release upload "$TAG" dist/*.tar.gz dist/SHA256SUMS --clobber
echo "published $(ls dist/*.tar.gz | wc -l) archives to $TAG"
