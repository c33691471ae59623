#!/usr/bin/env bash
# What the desktop app costs a laptop that also runs a model: resident memory of the app's whole
# process tree (the tray process and every process it started) started hidden, with the window
# open and after it closed; CPU over 60 s idle with the window closed; the time from start to
# the tray menu answering; the time from *Open Lull* to the window's first painted frame (cold,
# then warm). Release builds, on a private Xvfb display and D-Bus session, no managed server.
#
# Usage: scripts/footprint/run.sh [OUT.json]   (default bench/results/footprint.json)
#   FOOTPRINT_IDLE_S (default 60) sets the idle window. Builds the release binaries first
#   (`$CARGO build --release -p lull-desktop -p lull-window`; the UI must be built).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-"$ROOT/bench/results/footprint.json"}
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
IDLE_S=${FOOTPRINT_IDLE_S:-60}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BIN="$TARGET_DIR/release/lull-desktop"
TREE="python3 $ROOT/scripts/footprint/tree.py"
SETTLE_S=5        # after a change, before memory is read: late allocations, lazy loads
PAINTED_COLOURS=64

# shellcheck source=../../desktop/scripts/lib.sh
source "$ROOT/desktop/scripts/lib.sh"
require_tools Xvfb xwininfo dbus-daemon gdbus python3 curl import
(cd "$ROOT" && ${CARGO:-cargo} build -q --release -p lull-desktop -p lull-window)

trap desktop_session_stop EXIT
desktop_session_start

now_ms() { date +%s%3N; }
# Polls <command…> every 20 ms for up to 60 s; prints the milliseconds it took.
time_until() {
    local start; start=$(now_ms)
    local deadline=$((start + 60000))
    until "$@" 2>/dev/null; do
        [ "$(now_ms)" -lt "$deadline" ] || { echo "footprint: timed out waiting for: $*" >&2; return 1; }
        sleep 0.02
    done
    echo $(($(now_ms) - start))
}
painted() {
    local window; window=$(main_window)
    [ -n "$window" ] && import -window "$window" "$WORK/frame.png" 2>/dev/null &&
        [ "$(identify -format %k "$WORK/frame.png")" -gt "$PAINTED_COLOURS" ]
}
tree_rss_mb() { $TREE rss "$APP_PID" | head -n1 | awk '{printf "%.1f", $1 * 1024 / 1e6}'; }
no_children() { [ "$($TREE count "$APP_PID")" = 0 ]; }
open_window_ms() { # clicks Open Lull, prints the time to the first painted frame
    local start; start=$(now_ms)
    click_menu "Open Lull"
    time_until painted >/dev/null
    echo $(($(now_ms) - start))
}
close_window() {
    python3 "$SCRIPTS_DIR/x11_close.py" "$(main_window)"
    wait_until "$WAIT_CHANGE_S" no_children
}

start_ms=$(now_ms)
start_app --hidden
time_until menu_has "Open Lull" >/dev/null
menu_ms=$(($(now_ms) - start_ms))
sleep "$SETTLE_S"
hidden_mb=$(tree_rss_mb)

open_cold_ms=$(open_window_ms)
close_window
open_warm_ms=$(open_window_ms)
sleep "$SETTLE_S"
open_mb=$(tree_rss_mb)
echo "--- with the window open:"; $TREE rss "$APP_PID" | tail -n +2
close_window
sleep "$SETTLE_S"
closed_mb=$(tree_rss_mb)

cpu_before=$($TREE cpu "$APP_PID")
sleep "$IDLE_S"
cpu_after=$($TREE cpu "$APP_PID")
idle_cpu_ms=$((cpu_after - cpu_before))

mkdir -p "$(dirname "$OUT")"
cat >"$OUT" <<JSON
{
  "rss_mb_started_hidden": $hidden_mb,
  "rss_mb_window_open": $open_mb,
  "rss_mb_window_closed": $closed_mb,
  "idle_cpu_ms": $idle_cpu_ms,
  "idle_window_s": $IDLE_S,
  "start_to_tray_menu_ms": $menu_ms,
  "open_to_first_paint_ms_cold": $open_cold_ms,
  "open_to_first_paint_ms_warm": $open_warm_ms
}
JSON
cat <<TABLE
| what | figure | target |
|---|---|---|
| resident, whole tree, started hidden | $hidden_mb MB | |
| resident, whole tree, window open | $open_mb MB | |
| resident, whole tree, window closed | $closed_mb MB | ≤ 60 MB |
| CPU, ${IDLE_S} s idle, window closed | $idle_cpu_ms ms | |
| start to the tray menu answering | $menu_ms ms | |
| *Open Lull* to the first painted frame, cold / warm | $open_cold_ms / $open_warm_ms ms | ≤ 1 s warm |
TABLE
echo "footprint: $OUT"
