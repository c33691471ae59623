#!/usr/bin/env bash
# Smoke test of the desktop app, the way a person uses it, on a private Xvfb display and a
# private D-Bus session with a notification recorder (so it neither needs nor touches a real
# desktop). Two processes: `lull-desktop` lives in the tray and hosts the engine; it starts
# `lull-window` (found next to it, or at $LULL_WINDOW_BIN) for the window.
#
#   1. the app starts, opens its 900x640 "Lull" window (a lull-window process) and hosts the
#      engine's local API
#   2. closing the window ends the window process (no web process left) and the tray keeps running
#   3. the tray menu (driven over D-Bus, as a panel would) holds the items of DESIGN §1, with
#      counts from the engine; the drafts item opens the window; "Pause learning" pauses the
#      engine, its check follows, and the tray icon (its IconPixmap) turns paused and back
#   4. a review submitted through the API shows in "Queue: N deferred reviews" (an engine event,
#      not a poll), and that item opens the window
#   5. a second launch hands over to the first instance and exits 0
#   6. "Quit" stops the engine cleanly (api.json removed) and ends the app with exit code 0
#   7. with the API port taken, the app still starts, its tray says the engine is not running,
#      and exactly one notification says so
#   8. with `lull serve` on the data folder, the tray's engine refuses it and lull serve serves on
#   9. a training run under way when the tray is killed (-9) is adopted as interrupted by the next
#      start, and exactly one notification says so
#  10. with a managed server (the stand-in, logging its requests), a window opened from the tray
#      has its slots polled, and closing it stops the polling
#
# Usage: desktop/scripts/smoke.sh [--screenshot OUT.png] [PATH/TO/lull-desktop]
#   --screenshot  also saves a PNG of the window, taken once it has rendered (needs `import`).
# The binaries default to $CARGO_TARGET_DIR (else target/)/debug/{lull-desktop,lull-window,lull,
# lull-stand-in}; LULL_WINDOW_BIN, LULL_BIN and LULL_STAND_IN_BIN point elsewhere.
# Needs what lib.sh needs. Prints "smoke: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-target}
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BIN="$TARGET_DIR/debug/lull-desktop"
SCREENSHOT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --screenshot) SCREENSHOT=$2; shift 2 ;;
        *) BIN=$1; shift ;;
    esac
done

# shellcheck source=lib.sh
source "$HERE/lib.sh"
WAIT_RENDER_S=30    # for the page to paint, before a screenshot
RENDER_SETTLE_S=1   # once it painted, for fonts and late layout
MIN_COLOURS=64      # a painted page has text and the mark; a blank one a handful of colours
QUIET_S=3           # how long "nothing polled" is watched: six of the monitor's 500 ms polls

require_tools Xvfb xwininfo dbus-daemon gdbus python3 curl convert "$SYSTEM_PYTHON"
[ -z "$SCREENSHOT" ] || require_tools import
[ -x "$BIN" ] || { echo "smoke: $BIN not built: run cargo build -p lull-desktop" >&2; exit 1; }
LULL_BIN=${LULL_BIN:-"$(dirname "$BIN")/lull"}
[ -x "$LULL_BIN" ] || { echo "smoke: $LULL_BIN not built: run cargo build -p lull" >&2; exit 1; }
STAND_IN_BIN=${LULL_STAND_IN_BIN:-"$(dirname "$BIN")/lull-stand-in"}
[ -x "$STAND_IN_BIN" ] || { echo "smoke: $STAND_IN_BIN not built: run cargo build -p lull-stand-in" >&2; exit 1; }
WINDOW_BIN=${LULL_WINDOW_BIN:-"$(dirname "$BIN")/lull-window"}
[ -x "$WINDOW_BIN" ] || echo "smoke: $WINDOW_BIN not built (cargo build -p lull-window): the window checks will fail" >&2
case "$SCREENSHOT" in ""|/*) ;; *) SCREENSHOT="$PWD/$SCREENSHOT" ;; esac

trap desktop_session_stop EXIT
desktop_session_start

PASSED=0 FAILED=0
check() { # <description> <command…>
    local description=$1; shift
    if "$@"; then PASSED=$((PASSED + 1)); echo "ok      $description"
    else FAILED=$((FAILED + 1)); echo "FAILED  $description"; fi
}

start_app

check "the app starts and opens its window" wait_until "$WAIT_WINDOW_S" has_window
WINDOW=$(main_window)
check "the window is 900x640" [ "$(window_size "$WINDOW")" = "900x640" ]
check "the engine's local API answers (api.json, /v1/health)" wait_until "$WAIT_CHANGE_S" api_ready
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

[ -z "$WINDOW" ] || python3 "$HERE/x11_close.py" "$WINDOW"
check "closing the window destroys it" wait_until "$WAIT_CHANGE_S" no_window
check "the window process exited" wait_until "$WAIT_CHANGE_S" no_window_process
check "no web process is left after the close" wait_until "$WAIT_CHANGE_S" no_web_process
check "the app keeps running with no window" app_alive

tray_menu_ready() { menu_has "Open Lull" && menu_has "Quit"; }
check "the tray menu holds Open Lull and Quit" wait_until "$WAIT_CHANGE_S" tray_menu_ready
check "the tray menu counts the deferred reviews" \
    wait_until "$WAIT_CHANGE_S" menu_has "Queue: 0 deferred reviews"
check "… and the drafts waiting for review" menu_has "0 drafts waiting for review…"
check "the tray icon looks idle" wait_until "$WAIT_CHANGE_S" tray_look_is idle
click_menu "0 drafts waiting for review…" || true
check "the drafts item opens the window" wait_until "$WAIT_WINDOW_S" has_window
WINDOW=$(main_window)
[ -z "$WINDOW" ] || python3 "$HERE/x11_close.py" "$WINDOW"
check "… which closes again" wait_until "$WAIT_CHANGE_S" no_window
check "Defer learning until idle is a check item, checked (defer mode auto)" \
    menu_check_is "Defer learning until idle" 1
check "Pause learning is a check item, unchecked" menu_check_is "Pause learning" 0

click_menu "Pause learning" || true
paused_in_engine() { api GET /v1/settings | grep -q '"paused":true'; }
check "Pause learning pauses the engine" wait_until "$WAIT_CHANGE_S" paused_in_engine
check "… and its check follows" wait_until "$WAIT_CHANGE_S" menu_check_is "Pause learning" 1
check "… and the tray icon looks paused" wait_until "$WAIT_CHANGE_S" tray_look_is paused
click_menu "Pause learning" || true
resumed_in_engine() { api GET /v1/settings | grep -q '"paused":false'; }
check "Pause learning again resumes the engine" wait_until "$WAIT_CHANGE_S" resumed_in_engine
check "… and the tray icon looks idle again" wait_until "$WAIT_CHANGE_S" tray_look_is idle

api POST /v1/reviews '{"session_key":"smoke","messages":[{"role":"user","content":"hi"}]}' >/dev/null || true
check "a submitted review shows in the queue item" \
    wait_until "$WAIT_CHANGE_S" menu_has "Queue: 1 deferred review"
click_menu "Queue: 1 deferred review" || true
check "the queue item opens the window" wait_until "$WAIT_CHANGE_S" has_window

check "a second launch hands over and exits 0" timeout "$WAIT_WINDOW_S" "$BIN"
# The tray starts another lull-window for the request, which hands it to the open one and exits.
one_window_left() { app_alive && [ "$(window_count)" = 1 ] && [ "$(pgrep -c -P "$APP_PID")" = 1 ]; }
check "the first instance still runs, with one window" wait_until "$WAIT_CHANGE_S" one_window_left

click_menu "Quit" || true
check "Quit ends the app" wait_until "$WAIT_CHANGE_S" app_gone
APP_STATUS=0; wait "$APP_PID" || APP_STATUS=$?
APP_PID=""
check "the app exits with code 0" [ "$APP_STATUS" = 0 ]
check "Quit stopped the engine cleanly (api.json removed)" [ ! -e "$DATA_DIR/api.json" ]
check "… and closed its window" wait_until "$WAIT_CHANGE_S" no_window
check "… and took its single-instance socket away" [ ! -e "$DATA_DIR/desktop.sock" ]

# A port someone else holds: the engine cannot serve its API, and the app says so.
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(600)' >"$WORK/port" &
EXTRA_PIDS+=($!)
wait_until 5 test -s "$WORK/port"
NOTES_BEFORE=$(notes_count)
LULL_API_LISTEN="127.0.0.1:$(cat "$WORK/port")" start_app --hidden
check "with the API port taken the app keeps running" wait_until "$WAIT_CHANGE_S" menu_has "Learning engine not running: see why…"
check "… and shows no window until asked (--hidden)" no_window
sleep 2  # a second notification, if there were one, would have come by now
check "… and one notification says the engine is not running" \
    [ "$(notes_since "$NOTES_BEFORE")" = "Lull: Lull's learning engine is not running" ]
click_menu "Quit" || true
check "… and still quits" wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""

# A headless engine already serves the data folder: the app's engine refuses it (one engine per
# data folder, the same OS lock as `lull serve`), and the headless one keeps serving.
"$LULL_BIN" serve >>"$WORK/serve.log" 2>&1 &
SERVE_PID=$!
EXTRA_PIDS+=("$SERVE_PID")
wait_until "$WAIT_WINDOW_S" api_ready
start_app --hidden
check "with lull serve on the same data folder the app's engine refuses it" \
    wait_until "$WAIT_CHANGE_S" menu_has "Learning engine not running: see why…"
check "… saying another engine serves it" grep -q "another Lull engine (pid $SERVE_PID)" "$WORK/app.log"
serve_still_serves() { kill -0 "$SERVE_PID" && api_ready && grep -q "\"pid\": $SERVE_PID" "$DATA_DIR/api.json"; }
check "… and lull serve still serves it" serve_still_serves
click_menu "Quit" || true
check "… and the app still quits" wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""

# A crash mid-run: the next start adopts the run as interrupted, and the person hears of it once
# (the tray listens before its engine opens, which is when the adoption is announced).
fresh_data_dir crash
for skill in deploy-staging db-migration rotate-certs; do
    mkdir -p "$DATA_DIR/skills/$skill"
    printf -- '---\nname: %s\ndescription: How to %s, step by step.\n---\n# %s\n' "$skill" "$skill" "$skill" \
        >"$DATA_DIR/skills/$skill/SKILL.md"
done
start_app --hidden
wait_until "$WAIT_CHANGE_S" api_ready
# Routes and their outcomes, for a dataset to train on: the skill a request names succeeds.
python3 - "$DATA_DIR" <<'PY'
import json, sys, urllib.request
data_dir = sys.argv[1]
base = json.load(open(f"{data_dir}/api.json"))["base_url"]
token = open(f"{data_dir}/api-token").read().strip()
def post(path, body):
    request = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    body = urllib.request.urlopen(request).read()
    return json.loads(body) if body else None
requests = [("deploy the payments api to staging", "deploy-staging"),
            ("add a column to the orders table", "db-migration"),
            ("the certificate expires next week", "rotate-certs")]
for i in range(90):
    query, right = requests[i % 3]
    answer = post("/v1/route", {"query": f"{query} #{i}"})
    chosen = answer["ranked"][i % len(answer["ranked"])]["skill"]
    post("/v1/outcomes", {"route_id": answer["route_id"], "skill": chosen,
                          "outcome": "success" if chosen == right else "failure"})
PY
JOB_ID=$(api POST /v1/jobs '{"kind":"routing-head","stopping":{"max_rounds":10000,"wall_clock_s":600}}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' || true)
job_status() { api GET "/v1/jobs/$JOB_ID" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
job_is() { [ "$(job_status 2>/dev/null)" = "$1" ]; }
check "a training run starts" wait_until "$WAIT_CHANGE_S" job_is running
kill -9 "$APP_PID"; wait "$APP_PID" 2>/dev/null || true
NOTES_BEFORE=$(notes_count)
start_app --hidden
check "after kill -9 and a restart, the run is interrupted" wait_until "$WAIT_CHANGE_S" job_is interrupted
interrupted_note() { [ "$(notes_since "$NOTES_BEFORE")" = "Lull: A training run was interrupted" ]; }
check "… and one notification says so" wait_until "$WAIT_CHANGE_S" interrupted_note
sleep 1  # a second one, if there were one, would have come by now
check "… only one" interrupted_note
click_menu "Quit" || true
check "… and the app quits" wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""

# A managed server: the monitor polls its slots only while someone looks (DESIGN §3). The window
# the tray opens is someone; once it has closed, nothing is polled.
fresh_data_dir polling
export LULL_SERVER_STATE_FILE="$WORK/server/server.json"
mkdir -p "$WORK/server"
REQUESTS="$WORK/server/requests.log"
"$STAND_IN_BIN" --port 0 --state-file "$LULL_SERVER_STATE_FILE" --request-log "$REQUESTS" >>"$WORK/stand-in.log" 2>&1 &
EXTRA_PIDS+=($!)
wait_until "$WAIT_CHANGE_S" test -s "$LULL_SERVER_STATE_FILE"
slots_polled() { grep -c ' GET /slots$' "$REQUESTS" || true; }
start_app --hidden
wait_until "$WAIT_CHANGE_S" tray_menu_ready && wait_until "$WAIT_CHANGE_S" api_ready
sleep "$QUIET_S"
POLLED=$(slots_polled)
sleep "$QUIET_S"
check "with no window, the managed server's slots are not polled" [ "$(slots_polled)" = "$POLLED" ]
click_menu "Open Lull" || true
check "Open Lull opens the window" wait_until "$WAIT_WINDOW_S" has_window
polled_since() { [ "$(slots_polled)" -ge $(($1 + 3)) ]; }
check "… and while it is open the slots are polled" wait_until "$WAIT_CHANGE_S" polled_since "$POLLED"
WINDOW=$(main_window)
[ -z "$WINDOW" ] || python3 "$HERE/x11_close.py" "$WINDOW"
check "the window closes" wait_until "$WAIT_CHANGE_S" no_window_process
sleep 1  # a probe under way as the window went may still land
POLLED=$(slots_polled)
sleep "$QUIET_S"
check "… and then nothing polls the slots (${QUIET_S} s)" [ "$(slots_polled)" = "$POLLED" ]
click_menu "Quit" || true
check "… and the app quits" wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""

echo "smoke: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ] || { echo "--- app log ---"; tail -40 "$WORK/app.log"; exit 1; }
