#!/usr/bin/env bash
# The window's end-to-end tests: every click a person makes in the real app, checked in the
# engine afterwards (ui/e2e/*.e2e.ts, through WebDriver: tauri-driver in front of Debian's
# WebKitWebDriver). On a private Xvfb display, D-Bus session and home (the desktop smoke's
# helpers), with the real engine on a temp data folder and a stand-in llama-server whose
# scripted replies (scripts/e2e/replies.py) let the engine draft skills.
#
# Usage: scripts/e2e/run.sh [--screenshots DIR] [VITEST ARGS…]
#   --screenshots DIR  where each view's PNG goes (default: e2e-screenshots/ in the target dir)
#   VITEST ARGS        passed on, e.g. `-t 'a draft is approved'` runs that test alone
# Needs the UI built into the binaries (`npm --prefix ui run build`, then
# `cargo build -p lull-desktop -p lull-window -p lull-stand-in`, into $CARGO_TARGET_DIR
# or target/),
# and what scripts/bootstrap.sh installs (xvfb, dbus, webkit2gtk-driver, tauri-driver, the UI's
# npm packages).
#
# The application under test: the tray process `lull-desktop --hidden` (the engine and its API)
# is started here, and each test session opens the window process `lull-window --data-dir D`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# The desktop session helpers (Xvfb, D-Bus, private home, tray menu, local API) and the X11
# close script; the one place that says where they live.
DESKTOP_SCRIPTS=${LULL_DESKTOP_SCRIPTS:-"$ROOT/desktop/scripts"}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
DESKTOP_BIN="$TARGET_DIR/debug/lull-desktop"
WINDOW_BIN="$TARGET_DIR/debug/lull-window"
STAND_IN="$TARGET_DIR/debug/lull-stand-in"
NATIVE_DRIVER=${LULL_E2E_NATIVE_DRIVER:-/usr/bin/WebKitWebDriver}
MODEL=qwen3-8b  # the stand-in's loaded model, whose slot 0 is the person's prompt
RUN_LIMIT_S=${LULL_E2E_LIMIT_S:-300}  # the whole test run, warm, takes under a minute

SHOTS=""
VITEST_ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --screenshots) SHOTS=$2; shift 2 ;;
        *) VITEST_ARGS+=("$1"); shift ;;
    esac
done
[ -n "$SHOTS" ] || SHOTS="$TARGET_DIR/e2e-screenshots"
case "$SHOTS" in /*) ;; *) SHOTS="$PWD/$SHOTS" ;; esac

for binary in "$DESKTOP_BIN" "$WINDOW_BIN" "$STAND_IN"; do
    [ -x "$binary" ] || { echo "e2e: $binary not built (see the header of $0)" >&2; exit 1; }
done
[ -x "$NATIVE_DRIVER" ] || { echo "e2e: $NATIVE_DRIVER missing: apt-get install webkit2gtk-driver" >&2; exit 1; }
[ -d "$ROOT/ui/node_modules/webdriverio" ] || { echo "e2e: run npm ci --prefix ui first" >&2; exit 1; }

BIN=$DESKTOP_BIN  # lib.sh's start_app starts it
# shellcheck source=../../desktop/scripts/lib.sh
source "$DESKTOP_SCRIPTS/lib.sh"
require_tools Xvfb xwininfo dbus-daemon gdbus python3 curl tauri-driver

trap desktop_session_stop EXIT
desktop_session_start
mkdir -p "$SHOTS"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The managed server: router mode, the loaded model the engine learns on (its replies scripted)
# and a sleeping one that learning must never wake.
export LULL_SERVER_STATE_FILE="$WORK/llama/server.json"
python3 "$ROOT/scripts/e2e/replies.py" >"$WORK/replies.json"
"$STAND_IN" --mode router --model "$MODEL" --model gemma3-27b:sleeping --pace-ms 2 \
    --replies "$MODEL:$WORK/replies.json" --busy-on-signal "$MODEL:0" \
    --port 0 --state-file "$LULL_SERVER_STATE_FILE" >"$WORK/stand-in.log" 2>&1 &
STAND_IN_PID=$!
EXTRA_PIDS+=("$STAND_IN_PID")
wait_until "$WAIT_CHANGE_S" test -s "$LULL_SERVER_STATE_FILE" || { cat "$WORK/stand-in.log" >&2; exit 1; }
export LULL_SCHEDULER_SETTLE_S=1  # a lull a second after the last live turn, not 15

DRIVER_PORT=$(free_port)
tauri-driver --port "$DRIVER_PORT" --native-port "$(free_port)" --native-driver "$NATIVE_DRIVER" \
    >"$WORK/tauri-driver.log" 2>&1 &
EXTRA_PIDS+=($!)
driver_ready() { curl -fsS "http://127.0.0.1:$DRIVER_PORT/status" >/dev/null 2>&1; }
wait_until "$WAIT_CHANGE_S" driver_ready || { echo "e2e: tauri-driver did not answer" >&2; cat "$WORK/tauri-driver.log" >&2; exit 1; }

mkdir -p "$DATA_DIR"
start_app --hidden --data-dir "$DATA_DIR"
wait_until "$WAIT_WINDOW_S" api_ready || { echo "e2e: the tray process's API did not answer" >&2; tail "$WORK/app.log" >&2; exit 1; }

status=0
(
    cd "$ROOT/ui"
    LULL_E2E_APPLICATION=$WINDOW_BIN \
        LULL_E2E_DATA_DIR=$DATA_DIR LULL_E2E_WORK=$WORK LULL_E2E_SHOTS=$SHOTS \
        LULL_E2E_DRIVER_PORT=$DRIVER_PORT LULL_E2E_STAND_IN_PID=$STAND_IN_PID \
        LULL_E2E_DESKTOP_SCRIPTS=$DESKTOP_SCRIPTS LULL_E2E_NOTES=$NOTES \
        LULL_E2E_SERVER_STATE_FILE=$LULL_SERVER_STATE_FILE \
        timeout --kill-after=10 "$RUN_LIMIT_S" npx vitest run --config vitest.e2e.config.ts "${VITEST_ARGS[@]}"
) || status=$?
[ "$status" != 124 ] || echo "e2e: stopped after ${RUN_LIMIT_S}s (LULL_E2E_LIMIT_S)" >&2
if [ "$status" != 0 ]; then
    for log in app tauri-driver stand-in; do
        [ -s "$WORK/$log.log" ] && { echo "--- $log.log (last 30 lines) ---"; tail -30 "$WORK/$log.log"; }
    done
fi
echo "e2e: screenshots in $SHOTS"
exit "$status"
