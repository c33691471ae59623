#!/usr/bin/env bash
# Installs Lull's .deb into a temp root (`dpkg -x`: no root needed), checks what it installs
# (both binaries, the desktop entry that starts the tray, the icons), then starts the installed
# tray hidden under Xvfb and a private session bus, with a temp HOME and data folder, waits for
# its API to answer `/v1/health` (found through its api.json), and stops it with SIGTERM (Quit).
#
# Usage: scripts/package-test.sh [path/to/lull.deb]   (default: the one `make package` built;
#   with LULL_PACKAGE_PROFILE=debug, the debug one)
# Needs (Debian): dpkg, xvfb, dbus (dbus-run-session), python3, curl.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
WAIT_API_S=${WAIT_API_S:-60}   # a first start opens the database and may be slow on a cold disk
WAIT_STOP_S=${WAIT_STOP_S:-15}

deb=${1:-$(ls "$TARGET_DIR/${LULL_PACKAGE_PROFILE:-release}"/bundle/deb/*.deb 2>/dev/null | head -n1)}
[ -f "$deb" ] || { echo "package-test: no .deb (run make package first)" >&2; exit 1; }
for tool in dpkg-deb Xvfb dbus-run-session python3 curl; do
    command -v "$tool" >/dev/null || { echo "package-test: $tool not found (see $0)" >&2; exit 1; }
done

WORK=$(mktemp -d)
XVFB_PID=""
cleanup() {
    [ -z "$XVFB_PID" ] || kill "$XVFB_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
ok() { echo "package-test: ok: $*"; }

# --- what the package installs ------------------------------------------------------------------
INSTALLED="$WORK/root"
dpkg-deb -x "$deb" "$INSTALLED"
echo "package-test: $(dpkg-deb -f "$deb" Package Version | paste -sd' ') from $deb"
for binary in lull-window lull-desktop; do
    [ -x "$INSTALLED/usr/bin/$binary" ] || fail "/usr/bin/$binary is not installed"
done
ok "/usr/bin/lull-window and /usr/bin/lull-desktop"
entries=("$INSTALLED"/usr/share/applications/*.desktop)
[ -f "${entries[0]}" ] || fail "no desktop entry in /usr/share/applications"
grep -qx 'Exec=lull-desktop' "${entries[0]}" || fail "the desktop entry does not start the tray: $(grep '^Exec=' "${entries[0]}")"
icon=$(sed -n 's/^Icon=//p' "${entries[0]}")
for size in 32x32 128x128; do
    [ -s "$INSTALLED/usr/share/icons/hicolor/$size/apps/$icon.png" ] || fail "no $size icon named $icon"
done
ok "${entries[0]#"$INSTALLED"} (Exec=lull-desktop, Icon=$icon, icons 32x32 and 128x128)"

# --- the installed tray serves the API ----------------------------------------------------------
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>"$WORK/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 50); do [ -s "$WORK/display" ] && break; sleep 0.1; done
[ -s "$WORK/display" ] || fail "Xvfb did not start: $(cat "$WORK/xvfb.log")"
export DISPLAY=":$(cat "$WORK/display")"
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share"
export XDG_CACHE_HOME="$WORK/home/.cache" NO_AT_BRIDGE=1
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
# A port of its own and no managed server: nothing here touches a real Lull.
export LULL_API_LISTEN=127.0.0.1:0 LULL_SERVER_STATE_FILE="$WORK/no-server/server.json"
export TRAY="$INSTALLED/usr/bin/lull-desktop" DATA_DIR="$XDG_DATA_HOME/lull" LOG="$WORK/tray.log"
export WAIT_API_S WAIT_STOP_S
# Inside the session bus: start, wait for the API, ask it, stop.
dbus-run-session -- bash -euo pipefail -c '
    "$TRAY" --hidden >"$LOG" 2>&1 &
    tray=$!
    deadline=$((SECONDS + WAIT_API_S))
    until [ -s "$DATA_DIR/api.json" ] && url=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"base_url\"])" "$DATA_DIR/api.json" 2>/dev/null) \
        && health=$(curl -fsS "$url/v1/health" 2>/dev/null); do
        kill -0 "$tray" 2>/dev/null || { echo "the tray exited:"; cat "$LOG"; exit 1; }
        [ $SECONDS -lt $deadline ] || { echo "no API answer within ${WAIT_API_S}s:"; cat "$LOG"; kill "$tray"; exit 1; }
        sleep 0.2
    done
    echo "package-test: ok: $url/v1/health answers $health"
    kill -TERM "$tray"
    deadline=$((SECONDS + WAIT_STOP_S))
    while kill -0 "$tray" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || { echo "the tray did not stop within ${WAIT_STOP_S}s of SIGTERM"; kill -KILL "$tray"; exit 1; }
        sleep 0.2
    done
    set +e; wait "$tray"; code=$?; set -e
    [ "$code" -eq 0 ] || { echo "the tray exited with $code on SIGTERM (Quit exits 0):"; tail -n 20 "$LOG"; exit 1; }
    [ ! -e "$DATA_DIR/api.json" ] || { echo "api.json is left behind: the API did not stop cleanly"; exit 1; }
    echo "package-test: ok: SIGTERM stopped the tray (exit 0, api.json removed)"
' || fail "the installed tray did not serve and stop cleanly"
echo "package-test: passed"
