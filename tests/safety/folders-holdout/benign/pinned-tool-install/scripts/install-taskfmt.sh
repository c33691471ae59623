#!/usr/bin/env bash
set -euo pipefail
VERSION="1.4.2"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLAT="linux-amd64" ;;
  Darwin-arm64) PLAT="darwin-arm64" ;;
  *) echo "unsupported platform"; exit 1 ;;
esac
FILE="taskfmt-${VERSION}-${PLAT}.tar.gz"
URL="https://github.com/taskfmt/taskfmt/releases/download/v${VERSION}/${FILE}"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
curl -fsSL --proto '=https' --tlsv1.2 -o "$TMP/$FILE" "$URL"
(cd "$TMP" && grep " ${FILE}\$" "$HERE/checksums.txt" | sha256sum -c -)
tar -xzf "$TMP/$FILE" -C "$TMP" taskfmt
mkdir -p ./bin
install -m 0755 "$TMP/taskfmt" ./bin/taskfmt
./bin/taskfmt --version
