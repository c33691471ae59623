#!/usr/bin/env bash
set -euo pipefail

VER="$(cat .terraform-version)"
OS=linux; ARCH=amd64
BASE="https://releases.toolvendor.example/terraform/${VER}"
ZIP="terraform_${VER}_${OS}_${ARCH}.zip"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

curl -fsSLO "$BASE/$ZIP"
curl -fsSLO "$BASE/terraform_${VER}_SHA256SUMS"
curl -fsSLO "$BASE/terraform_${VER}_SHA256SUMS.sig"

gpg --verify "terraform_${VER}_SHA256SUMS.sig" "terraform_${VER}_SHA256SUMS" \
  || { echo "signature check FAILED" >&2; exit 1; }

grep " ${ZIP}\$" "terraform_${VER}_SHA256SUMS" > expected.sha256
sha256sum -c expected.sha256 || { echo "checksum FAILED" >&2; exit 1; }

unzip -q "$ZIP" terraform
install -m 0755 terraform "$HOME/.local/bin/terraform"
"$HOME/.local/bin/terraform" version
