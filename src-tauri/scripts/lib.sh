# Shared by smoke.sh and the window's end-to-end tests (scripts/e2e/run.sh): a private X display
# and D-Bus session, a private home, the app's window, its tray menu (over D-Bus, as a panel
# drives it) and its local API.
# Source it after setting BIN; call `desktop_session_start` first. Everything it starts is
# stopped by `desktop_session_stop`, which the sourcing script runs on EXIT.
#
# Needs (Debian): xvfb, x11-utils, dbus-daemon, libglib2.0-bin, python3, curl.

WAIT_WINDOW_S=${WAIT_WINDOW_S:-60}  # first start: WebKit's processes are slow on a cold cache
WAIT_CHANGE_S=${WAIT_CHANGE_S:-15}  # any later change (close, reopen, quit, a menu label)
SCRIPTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

require_tools() { # <tool…>
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool not found (see the header of $0)" >&2; exit 1; }
    done
}

WORK="" XVFB_PID="" DBUS_PID="" APP_PID=""
EXTRA_PIDS=()

# Starts Xvfb and a session bus, and points HOME and the XDG folders at a fresh temp dir.
# The engine gets an API port of its own choosing and no managed server unless the caller sets
# LULL_SERVER_STATE_FILE afterwards.
desktop_session_start() {
    WORK=$(mktemp -d)
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>"$WORK/xvfb.log" &
    XVFB_PID=$!
    for _ in $(seq 50); do [ -s "$WORK/display" ] && break; sleep 0.1; done
    [ -s "$WORK/display" ] || { echo "Xvfb did not start:" >&2; cat "$WORK/xvfb.log" >&2; exit 1; }
    export DISPLAY=":$(cat "$WORK/display")"
    { read -r DBUS_SESSION_BUS_ADDRESS; read -r DBUS_PID; } < <(dbus-daemon --session --fork --print-address=1 --print-pid=1)
    export DBUS_SESSION_BUS_ADDRESS
    export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share"
    export XDG_CACHE_HOME="$WORK/home/.cache" NO_AT_BRIDGE=1
    mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
    DATA_DIR="$XDG_DATA_HOME/lull"  # the engine's data folder (api.json, api-token, skills/)
    # Port 0: the engine takes a free port and writes it to api.json, so a `lull serve` on the
    # default 7707 (or another test) never collides with this one.
    export LULL_API_LISTEN=127.0.0.1:0
    export LULL_SERVER_STATE_FILE="$WORK/no-server/server.json"
}

# Points the next app start at an empty data folder of its own ($WORK/<name>): a second app in
# the same display and session that must not see what an earlier one queued or stored.
fresh_data_dir() { # <name>
    export XDG_DATA_HOME="$WORK/$1/.local/share"
    mkdir -p "$XDG_DATA_HOME"
    DATA_DIR="$XDG_DATA_HOME/lull"
}

desktop_session_stop() {
    local pid
    for pid in "$APP_PID" "${EXTRA_PIDS[@]}" "$DBUS_PID" "$XVFB_PID"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    [ -z "$APP_PID" ] || wait "$APP_PID" 2>/dev/null || true
    [ -z "$WORK" ] || rm -rf "$WORK"
}

start_app() { # [args…]
    "$BIN" "$@" >>"$WORK/app.log" 2>&1 &
    APP_PID=$!
}

wait_until() { # <seconds> <command…>
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.2; done
}

# --- the window -------------------------------------------------------------------------------
main_window() { xwininfo -root -tree | awk '/"Lull": \("lull-desktop"/ {print $1; exit}'; }
window_size() { xwininfo -id "$1" | awk '/Width:/ {w=$2} /Height:/ {h=$2} END {print w "x" h}'; }
has_window() { [ -n "$(main_window)" ]; }
no_window() { [ -z "$(main_window)" ]; }
app_alive() { kill -0 "$APP_PID" 2>/dev/null; }
app_gone() { ! app_alive; }
no_web_process() { ! pgrep -P "$APP_PID" -f WebKitWebProcess >/dev/null; }

# --- the tray menu (com.canonical.dbusmenu, exported by the app's own connection) ---------------
MENU_PATH=/org/ayatana/NotificationItem/tray_icon_tray_app_lull/Menu
MENU_OWNER=""
# Reads the menu layout into $WORK/menu (labels and check states).
find_menu() {
    local name pid
    for name in $(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.ListNames | grep -oE "':[0-9.]+'" | tr -d "'"); do
        pid=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
            --method org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null | grep -oE '[0-9]+,' | tr -d ,) || continue
        [ "$pid" = "$APP_PID" ] || continue
        if gdbus call --session --dest "$name" --object-path "$MENU_PATH" \
            --method com.canonical.dbusmenu.GetLayout -- 0 -1 "['label', 'toggle-state', 'enabled']" >"$WORK/menu" 2>/dev/null; then
            MENU_OWNER=$name
            return 0
        fi
    done
    return 1
}
# One line per item: `<id> <toggle-state or -> <label>`, from the last find_menu.
menu_items() {
    python3 - "$WORK/menu" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for match in re.finditer(r"\((\d+), \{([^{}]*)\}", text):
    props = match.group(2)
    label = re.search(r"'label': <'((?:[^'\\]|\\.)*)'>", props)
    if not label:
        continue
    toggle = re.search(r"'toggle-state': <(-?\d+)>", props)
    print(match.group(1), toggle.group(1) if toggle else "-", label.group(1).encode().decode("unicode_escape").encode("latin-1").decode("utf-8"))
PY
}
menu_item_id() { menu_items | awk -v label="$1" '{ id = $1; $1 = ""; $2 = ""; sub(/^  /, ""); if ($0 == label) { print id; exit } }'; }
menu_item_checked() { menu_items | awk -v label="$1" '{ id = $1; state = $2; $1 = ""; $2 = ""; sub(/^  /, ""); if ($0 == label) { print state; exit } }'; }
menu_has() { find_menu && [ -n "$(menu_item_id "$1")" ]; }
menu_check_is() { find_menu && [ "$(menu_item_checked "$1")" = "$2" ]; } # <label> <0|1>
click_menu() { # <label>
    find_menu || return 1
    local id; id=$(menu_item_id "$1")
    [ -n "$id" ] || { echo "no menu item labelled '$1'" >&2; return 1; }
    gdbus call --session --dest "$MENU_OWNER" --object-path "$MENU_PATH" \
        --method com.canonical.dbusmenu.Event -- "$id" clicked "<int32 0>" 0 >/dev/null
}

# --- the engine's local API ---------------------------------------------------------------------
api_url() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$DATA_DIR/api.json" 2>/dev/null; }
api_ready() { [ -s "$DATA_DIR/api.json" ] && curl -fsS "$(api_url)/v1/health" >/dev/null 2>&1; }
api() { # <method> <path> [json body]
    local method=$1 path=$2 body=${3:-}
    curl -fsS -X "$method" -H "Authorization: Bearer $(cat "$DATA_DIR/api-token")" \
        ${body:+-H 'Content-Type: application/json' --data "$body"} "$(api_url)$path"
}
