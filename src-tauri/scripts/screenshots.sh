#!/usr/bin/env bash
# Screenshots of the Overview, Reviews and Settings views with a real engine and a stand-in
# llama-server behind them, on a private Xvfb display (so it neither needs nor touches a real
# desktop). The story they tell: your agent is answering (one live turn, one busy slot on the
# managed server), so two reviews wait for a lull; one review your agent asked for explicitly
# ran at once and failed (the stand-in's reply is not a review); one was dropped. A fourth shot
# shows the window when the engine cannot start (its API port is taken). The routing head has
# ranked three skills for a few requests and heard how they did.
#
# Usage: src-tauri/scripts/screenshots.sh [OUT_DIR]   (default docs/screenshots)
# Builds what it needs first (`cargo build -p lull-desktop -p lull-stand-in`; the UI must be
# built: `npm --prefix ui run build`). Needs what smoke.sh needs, plus imagemagick.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-"$ROOT/docs/screenshots"}
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
BIN="$ROOT/target/debug/lull-desktop"
STAND_IN="$ROOT/target/debug/lull-stand-in"

# shellcheck source=lib.sh
source "$HERE/lib.sh"
RENDER_SETTLE_S=2   # after a view change, for the engine's answer and the paint
NAV_X=98            # the navigation column's middle, in window pixels
NAV_ROUTING_Y=238   # the Routing button (the fifth) in a 900x640 window
NAV_SETTINGS_Y=276  # the Settings button (the sixth)

require_tools Xvfb xwininfo dbus-daemon gdbus python3 curl import
(cd "$ROOT" && cargo build -q -p lull-desktop -p lull-stand-in)
mkdir -p "$OUT"

trap desktop_session_stop EXIT
desktop_session_start

# The managed server: router mode, one loaded model with one slot busy (the person's prompt),
# one sleeping model that learning must never wake.
export LULL_SERVER_STATE_FILE="$WORK/llama/server.json"
mkdir -p "$WORK/llama"
"$STAND_IN" --mode router --model qwen3-8b --model gemma3-27b:sleeping --busy qwen3-8b:0 \
    --port 0 --state-file "$LULL_SERVER_STATE_FILE" >"$WORK/stand-in.log" 2>&1 &
EXTRA_PIDS+=($!)
wait_until "$WAIT_CHANGE_S" test -s "$LULL_SERVER_STATE_FILE" || { cat "$WORK/stand-in.log" >&2; exit 1; }

# A few skills for the routing head to rank.
skill() { # <name> <description>
    mkdir -p "$DATA_DIR/skills/$1"
    printf -- '---\nname: %s\ndescription: %s\n---\n\n# %s\n' "$1" "$2" "$1" >"$DATA_DIR/skills/$1/SKILL.md"
}
skill deploy-staging "Deploy a service to the staging cluster and check its health"
skill db-migration "Write and run a database migration safely, with a rollback"
skill rotate-certs "Rotate TLS certificates before they expire"

start_app
wait_until "$WAIT_WINDOW_S" has_window || { echo "no window" >&2; tail "$WORK/app.log" >&2; exit 1; }
wait_until "$WAIT_CHANGE_S" api_ready || { echo "no API" >&2; tail "$WORK/app.log" >&2; exit 1; }
WINDOW=$(main_window)

conversation() { # <text>
    printf '[{"role":"user","content":"%s"},{"role":"assistant","content":"Done: I ran the migration and checked the logs."}]' "$1"
}
api POST /v1/turns/start '{"session_key":"agent-9"}' >/dev/null
api POST /v1/reviews "{\"session_key\":\"agent-4\",\"focus\":\"how I deploy to staging\",\"messages\":$(conversation 'deploy the api to staging')}" >/dev/null
api POST /v1/reviews "{\"session_key\":\"agent-7\",\"messages\":$(conversation 'migrate the orders table')}" >/dev/null
api POST /v1/reviews "{\"session_key\":\"agent-12\",\"messages\":$(conversation 'rotate the TLS certificates')}" >/dev/null
dropped=$(api POST /v1/reviews "{\"session_key\":\"agent-3\",\"messages\":$(conversation 'what time is it')}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["review_id"])')
api DELETE "/v1/reviews/$dropped" >/dev/null
failed_for_good() { api GET '/v1/reviews?status=failed' | grep -q agent-4; }
wait_until 30 failed_for_good || echo "screenshots: the focused review did not fail for good in time" >&2

# Some routes and their outcomes, so the Routing view has a reward curve.
route_and_report() { # <query> <outcome>
    local answer route skill
    answer=$(api POST /v1/route "{\"query\":\"$1\"}")
    route=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["route_id"])' <<<"$answer")
    skill=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["skill"])' <<<"$answer")
    api POST /v1/outcomes "{\"route_id\":\"$route\",\"skill\":\"$skill\",\"outcome\":\"$2\"}" >/dev/null
}
for round in 1 2 3 4 5 6; do
    route_and_report "deploy the payments api to staging" success
    route_and_report "add a column to the orders table" "$([ $((round % 3)) = 0 ] && echo failure || echo success)"
    route_and_report "the certificate expires next week" "$([ $round -le 2 ] && echo failure || echo success)"
done

shoot() { # <name>
    sleep "$RENDER_SETTLE_S"
    import -window "$WINDOW" "$OUT/$1.png"
    echo "screenshot: $OUT/$1.png"
}
shoot overview
click_menu "Queue: 2 deferred reviews"
shoot reviews
python3 "$HERE/x11_click.py" "$WINDOW" "$NAV_X" "$NAV_ROUTING_Y"
shoot routing
python3 "$HERE/x11_click.py" "$WINDOW" "$NAV_X" "$NAV_SETTINGS_Y"
shoot settings

click_menu "Quit"
wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""

# And the window when the engine cannot start: its API port is taken.
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(600)' >"$WORK/port" &
EXTRA_PIDS+=($!)
wait_until 5 test -s "$WORK/port"
LULL_API_LISTEN="127.0.0.1:$(cat "$WORK/port")" start_app
wait_until "$WAIT_WINDOW_S" has_window
WINDOW=$(main_window)
wait_until "$WAIT_CHANGE_S" menu_has "Learning engine not running: see why…"
shoot engine-not-running
click_menu "Quit"
wait_until "$WAIT_CHANGE_S" app_gone
APP_PID=""
