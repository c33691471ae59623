# Shared by smoke.sh and the window's end-to-end tests (scripts/e2e/run.sh): a private X
# display and D-Bus session with a notification recorder, a private home, the window (the
# `lull-window` process), the tray (its StatusNotifierItem and menu over D-Bus, as a panel reads
# and drives them) and the engine's local API.
# Source it after setting BIN (the `lull-desktop` binary); call `desktop_session_start` first.
# Everything it starts is stopped by `desktop_session_stop`, which the sourcing script runs on
# EXIT.
#
# Needs (Debian): xvfb, x11-utils, dbus-daemon, libglib2.0-bin, python3, curl, imagemagick, and
# python3-dbus + python3-gi for the system python (SYSTEM_PYTHON) that runs the recorder.

WAIT_WINDOW_S=${WAIT_WINDOW_S:-60}  # first start: WebKit's processes are slow on a cold cache
WAIT_CHANGE_S=${WAIT_CHANGE_S:-15}  # any later change (close, reopen, quit, a menu label)
SCRIPTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ICONS_DIR=$(cd "$SCRIPTS_DIR/../../icons/tray" && pwd)  # the PNG of each tray look
# Debian's python3-dbus and python3-gi belong to the system python, whatever python3 is first on
# PATH (pyenv, a venv).
SYSTEM_PYTHON=${SYSTEM_PYTHON:-/usr/bin/python3}

require_tools() { # <tool…>
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool not found (see the header of $0)" >&2; exit 1; }
    done
}

WORK="" XVFB_PID="" DBUS_PID="" APP_PID="" RECORDER_PID=""
EXTRA_PIDS=()

# Starts Xvfb, a session bus with a notification recorder on it ($NOTES: one JSON line per
# notification), and points HOME and the XDG folders at a fresh temp dir.
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
    NOTES="$WORK/notifications.jsonl"
    : >"$NOTES"
    "$SYSTEM_PYTHON" "$SCRIPTS_DIR/notification_recorder.py" "$NOTES" 2>"$WORK/recorder.log" &
    RECORDER_PID=$!
    wait_until 10 bus_has_name org.freedesktop.Notifications \
        || { echo "the notification recorder did not start:" >&2; cat "$WORK/recorder.log" >&2; exit 1; }
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
    for pid in "$APP_PID" "${EXTRA_PIDS[@]}" "$RECORDER_PID" "$DBUS_PID" "$XVFB_PID"; do
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

bus_has_name() { # <well-known name>
    gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true
}

# --- the window (the `lull-window` process the tray starts; X11 class "lull-window") ------------
main_window() { xwininfo -root -tree | awk '/"Lull": \("lull-window"/ {print $1; exit}'; }
window_count() { xwininfo -root -tree | grep -c '"Lull": ("lull-window"' || true; }
# An id of 0 would make xwininfo wait for a click: no window has no size.
window_size() { # <window id>
    case "$1" in ""|0|0x0) echo none; return ;; esac
    xwininfo -id "$1" | awk '/Width:/ {w=$2} /Height:/ {h=$2} END {print w "x" h}'
}
has_window() { [ -n "$(main_window)" ]; }
no_window() { [ -z "$(main_window)" ]; }
app_alive() { kill -0 "$APP_PID" 2>/dev/null; }
app_gone() { ! app_alive; }
# The tray's children are its window processes, and nothing else.
no_window_process() { ! pgrep -P "$APP_PID" >/dev/null; }
# WebKit processes of this session (by its bus address), wherever they were reparented.
session_web_processes() {
    local dir
    for dir in /proc/[0-9]*; do
        case "$(cat "$dir/comm" 2>/dev/null)" in WebKit*) ;; *) continue ;; esac
        { tr '\0' '\n' <"$dir/environ"; } 2>/dev/null | grep -qxF "DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS" \
            && echo "${dir#/proc/}"
    done
    return 0
}
no_web_process() { [ -z "$(session_web_processes)" ]; }
# Resident memory (kB) of a process and all its descendants.
tree_rss_kb() { # <pid>
    local pid=$1 total child
    total=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    for child in $(pgrep -P "$pid"); do total=$((total + $(tree_rss_kb "$child"))); done
    echo "${total:-0}"
}

# --- the tray (StatusNotifierItem at /StatusNotifierItem, com.canonical.dbusmenu at /MenuBar,
# both on the app's own connection; no StatusNotifierWatcher needed) -----------------------------
SNI_PATH=/StatusNotifierItem
MENU_PATH=/MenuBar
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

# The sha256 of the tray's IconPixmap as the app sends it now (ARGB32, network byte order).
tray_icon_digest() {
    find_menu || return 1
    gdbus call --session --dest "$MENU_OWNER" --object-path "$SNI_PATH" \
        --method org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierItem IconPixmap >"$WORK/pixmap" 2>/dev/null || return 1
    python3 - "$WORK/pixmap" <<'PY'
import hashlib, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
match = re.search(r"\(\s*(\d+),\s*(\d+),\s*\[byte ([^\]]*)\]", text)
if not match:
    sys.exit(1)
pixels = bytes(int(b, 16) for b in match.group(3).split(", "))
assert len(pixels) == int(match.group(1)) * int(match.group(2)) * 4, "a pixmap is width x height x 4 bytes"
print(hashlib.sha256(pixels).hexdigest())
PY
}
# The sha256 of icons/tray/<look>.png as an ARGB32 pixmap.
look_digest() { # <look>
    convert "$ICONS_DIR/$1.png" -depth 8 rgba:- | python3 -c '
import hashlib, sys
rgba = sys.stdin.buffer.read()
argb = bytearray(len(rgba))
argb[0::4], argb[1::4], argb[2::4], argb[3::4] = rgba[3::4], rgba[0::4], rgba[1::4], rgba[2::4]
print(hashlib.sha256(argb).hexdigest())'
}
# Whether the tray icon shows <look>: idle, learning, paused or attention.
tray_look_is() { # <look>
    local shown; shown=$(tray_icon_digest) || return 1
    [ "$shown" = "$(look_digest "$1")" ]
}

# --- notifications (what the recorder received) -----------------------------------------------
notes_count() { wc -l <"$NOTES" | tr -d ' '; }
# Notifications after the first <n>, one summary a line.
notes_since() { tail -n "+$(($1 + 1))" "$NOTES" | python3 -c '
import json, sys
for line in sys.stdin:
    note = json.loads(line)
    print(note["app_name"] + ": " + note["summary"])'; }

# --- the engine's local API ---------------------------------------------------------------------
api_url() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$DATA_DIR/api.json" 2>/dev/null; }
api_ready() { [ -s "$DATA_DIR/api.json" ] && curl -fsS "$(api_url)/v1/health" >/dev/null 2>&1; }
api() { # <method> <path> [json body]
    local method=$1 path=$2 body=${3:-}
    curl -fsS -X "$method" -H "Authorization: Bearer $(cat "$DATA_DIR/api-token")" \
        ${body:+-H 'Content-Type: application/json' --data "$body"} "$(api_url)$path"
}
