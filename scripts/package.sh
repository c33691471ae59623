#!/usr/bin/env bash
# Builds Lull's .deb with the Tauri bundler (offline, no AppImage): the window `lull-window`
# (Tauri's main binary), the tray `lull-desktop` (bundled as an external binary), a desktop
# entry that starts the tray, and the icons. Prints the .deb's path last.
#
# Usage: scripts/package.sh   (the UI must be built: `npm --prefix ui run build`)
#   LULL_DESKTOP_BIN=<file>   bundle this tray binary instead of building it
#                             (`$CARGO build --release -p lull-desktop`)
#   LULL_PACKAGE_PROFILE=debug  bundle debug builds (`tauri build --debug`): what `make test`
#                             installs, since it reuses the tests' build instead of a release
#                             build of everything; `make package` is release
#
# The tray is named in the bundler's config only here (src-tauri/tauri.package.json, merged by
# `tauri build --config`): tauri-build copies every external binary on each build, so naming it
# in tauri.conf.json would break a plain `cargo build` of the window without one.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CARGO=${CARGO:-cargo}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
TAURI="$ROOT/ui/node_modules/.bin/tauri"
[ -x "$TAURI" ] || { echo "package.sh: $TAURI not found: run npm ci --prefix ui" >&2; exit 1; }
[ -s ui/dist/index.html ] || { echo "package.sh: ui/dist is missing: run npm --prefix ui run build" >&2; exit 1; }

PROFILE=${LULL_PACKAGE_PROFILE:-release}
case "$PROFILE" in
    release) CARGO_PROFILE=(--release); TAURI_PROFILE=() ;;
    debug) CARGO_PROFILE=(); TAURI_PROFILE=(--debug) ;;
    *) echo "package.sh: LULL_PACKAGE_PROFILE is release or debug, not '$PROFILE'" >&2; exit 1 ;;
esac
tray=${LULL_DESKTOP_BIN:-}
built_tray="$TARGET_DIR/$PROFILE/lull-desktop"
if [ -z "$tray" ]; then
    $CARGO build "${CARGO_PROFILE[@]}" -p lull-desktop
    tray=$built_tray
else
    # tauri-build copies the external binary over cargo's own <profile>/lull-desktop; put cargo's
    # back afterwards, so a stand-in never passes for a build of the tray.
    kept=$(mktemp -d)
    [ ! -e "$built_tray" ] || cp -p "$built_tray" "$kept/lull-desktop"
    trap 'if [ -e "$kept/lull-desktop" ]; then cp -p "$kept/lull-desktop" "$built_tray"; else rm -f "$built_tray"; fi; rm -rf "$kept"' EXIT
fi
mkdir -p src-tauri/binaries
# The bundler wants the tray under its target triple; it installs it as /usr/bin/lull-desktop.
# Copied only when it changed: tauri-build watches the file, and a new one relinks the window.
sidecar="src-tauri/binaries/lull-desktop-$TRIPLE"
cmp -s "$tray" "$sidecar" || install -m 0755 "$tray" "$sidecar"

rm -rf "$TARGET_DIR/$PROFILE/bundle/deb"
(cd src-tauri && "$TAURI" build "${TAURI_PROFILE[@]}" --bundles deb --config "$ROOT/src-tauri/tauri.package.json")
deb=$(ls "$TARGET_DIR/$PROFILE"/bundle/deb/*.deb)
echo "$deb"
