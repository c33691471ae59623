#!/usr/bin/env bash
# Smoke test of the desktop shell, the way a person uses it, on a private Xvfb display and a
# private D-Bus session (so it neither needs nor touches a real desktop):
#
#   1. the app starts and opens its 900x640 "Lull" window
#   2. closing the window destroys it (no web process left) and the app keeps running
#   3. the tray menu (driven over D-Bus, as a panel would) holds "Open Lull" and "Quit"
#   4. "Open Lull" builds the window anew
#   5. a second launch hands over to the first instance and exits 0
#   6. "Quit" ends the app with exit code 0
#
# Usage: src-tauri/scripts/smoke.sh [--screenshot OUT.png] [PATH/TO/lull-desktop]
#   --screenshot  also saves a PNG of the window, taken once it has rendered (needs `import`).
# Needs (Debian): xvfb, x11-utils, dbus-daemon, libglib2.0-bin, python3; imagemagick for
# --screenshot. Prints "smoke: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$HERE/../../target/debug/lull-desktop"
SCREENSHOT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --screenshot) SCREENSHOT=$2; shift 2 ;;
        *) BIN=$1; shift ;;
    esac
done

WAIT_WINDOW_S=60    # first start: WebKit's processes are slow on a cold cache
WAIT_CHANGE_S=15    # any later change (close, reopen, quit)
WAIT_RENDER_S=30    # for the page to paint, before a screenshot
RENDER_SETTLE_S=1   # once it painted, for fonts and late layout
MIN_COLOURS=64      # a painted page has text and the mark; a blank one a handful of colours

for tool in Xvfb xwininfo dbus-daemon gdbus python3; do
    command -v "$tool" >/dev/null || { echo "smoke: $tool not found (see the header of $0)" >&2; exit 1; }
done
[ -z "$SCREENSHOT" ] || command -v import >/dev/null || { echo "smoke: import not found: apt-get install imagemagick" >&2; exit 1; }
[ -x "$BIN" ] || { echo "smoke: $BIN not built: run cargo build -p lull-desktop" >&2; exit 1; }
case "$SCREENSHOT" in ""|/*) ;; *) SCREENSHOT="$PWD/$SCREENSHOT" ;; esac

WORK=$(mktemp -d)
XVFB_PID="" DBUS_PID="" APP_PID=""
cleanup() {
    for pid in "$APP_PID" "$DBUS_PID" "$XVFB_PID"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

# A private X display and session bus; a private home for anything the app writes.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>"$WORK/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 50); do [ -s "$WORK/display" ] && break; sleep 0.1; done
[ -s "$WORK/display" ] || { echo "smoke: Xvfb did not start:" >&2; cat "$WORK/xvfb.log" >&2; exit 1; }
export DISPLAY=":$(cat "$WORK/display")"
{ read -r DBUS_SESSION_BUS_ADDRESS; read -r DBUS_PID; } < <(dbus-daemon --session --fork --print-address=1 --print-pid=1)
export DBUS_SESSION_BUS_ADDRESS
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share"
export XDG_CACHE_HOME="$WORK/home/.cache" NO_AT_BRIDGE=1
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"

PASSED=0 FAILED=0
check() { # <description> <command…>
    local description=$1; shift
    if "$@"; then PASSED=$((PASSED + 1)); echo "ok      $description"
    else FAILED=$((FAILED + 1)); echo "FAILED  $description"; fi
}
main_window() { xwininfo -root -tree | awk '/"Lull": \("lull-desktop"/ {print $1; exit}'; }
window_size() { xwininfo -id "$1" | awk '/Width:/ {w=$2} /Height:/ {h=$2} END {print w "x" h}'; }
wait_until() { # <seconds> <command…>
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.2; done
}
has_window() { [ -n "$(main_window)" ]; }
no_window() { [ -z "$(main_window)" ]; }
app_alive() { kill -0 "$APP_PID" 2>/dev/null; }
app_gone() { ! app_alive; }
no_web_process() { ! pgrep -P "$APP_PID" -f WebKitWebProcess >/dev/null; }

# The tray menu is exported over D-Bus (com.canonical.dbusmenu) by the app's own connection.
MENU_PATH=/org/ayatana/NotificationItem/tray_icon_tray_app_lull/Menu
MENU_OWNER=""
find_menu() {
    local name pid
    for name in $(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.ListNames | grep -oE "':[0-9.]+'" | tr -d "'"); do
        pid=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
            --method org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null | grep -oE '[0-9]+,' | tr -d ,) || continue
        [ "$pid" = "$APP_PID" ] || continue
        if gdbus call --session --dest "$name" --object-path "$MENU_PATH" \
            --method com.canonical.dbusmenu.GetLayout -- 0 -1 "['label']" >"$WORK/menu" 2>/dev/null; then
            MENU_OWNER=$name
            return 0
        fi
    done
    return 1
}
menu_item_id() { grep -oE "\(([0-9]+), \{'label': <'$1'>\}" "$WORK/menu" | grep -oE '^\([0-9]+' | tr -d '('; }
click_menu() { # <label>
    gdbus call --session --dest "$MENU_OWNER" --object-path "$MENU_PATH" \
        --method com.canonical.dbusmenu.Event -- "$(menu_item_id "$1")" clicked "<int32 0>" 0 >/dev/null
}
tray_menu_ready() { find_menu && [ -n "$(menu_item_id "Open Lull")" ] && [ -n "$(menu_item_id "Quit")" ]; }

"$BIN" >"$WORK/app.log" 2>&1 &
APP_PID=$!

check "the app starts and opens its window" wait_until "$WAIT_WINDOW_S" has_window
WINDOW=$(main_window)
check "the window is 900x640" [ "$(window_size "${WINDOW:-0x0}")" = "900x640" ]
# The window maps before the page paints: shoot until the picture is more than a blank fill.
rendered() {
    import -window "$WINDOW" "$WORK/shot.png" 2>/dev/null || return 1
    [ "$(identify -format %k "$WORK/shot.png")" -gt "$MIN_COLOURS" ]
}
if [ -n "$SCREENSHOT" ] && [ -n "$WINDOW" ]; then
    if wait_until "$WAIT_RENDER_S" rendered; then
        sleep "$RENDER_SETTLE_S" && import -window "$WINDOW" "$SCREENSHOT" && echo "screenshot: $SCREENSHOT"
    else
        echo "screenshot: the window stayed blank for ${WAIT_RENDER_S}s; not saved" >&2
    fi
fi

python3 "$HERE/x11_close.py" "${WINDOW:-0x0}"
check "closing the window destroys it" wait_until "$WAIT_CHANGE_S" no_window
check "no web process is left after the close" wait_until "$WAIT_CHANGE_S" no_web_process
check "the app keeps running with no window" app_alive

check "the tray menu holds Open Lull and Quit" wait_until "$WAIT_CHANGE_S" tray_menu_ready
click_menu "Open Lull" || true
check "Open Lull builds the window anew" wait_until "$WAIT_CHANGE_S" has_window

check "a second launch hands over and exits 0" timeout "$WAIT_WINDOW_S" "$BIN"
check "the first instance still runs, with one window" sh -c "kill -0 $APP_PID && [ \"\$(xwininfo -root -tree | grep -c '\"Lull\": (\"lull-desktop\"')\" = 1 ]"

click_menu "Quit" || true
check "Quit ends the app" wait_until "$WAIT_CHANGE_S" app_gone
APP_STATUS=0; wait "$APP_PID" || APP_STATUS=$?
APP_PID=""
check "the app exits with code 0" [ "$APP_STATUS" = 0 ]

echo "smoke: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ] || { echo "--- app log ---"; tail -40 "$WORK/app.log"; exit 1; }
