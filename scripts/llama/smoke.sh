#!/usr/bin/env bash
# Smoke check of the real llama.cpp llama-server with a tiny random model:
# single-model mode (health, models, slots, a streamed completion seen busy,
# the slot freed after the client drops, a wrong key), embeddings mode, and
# router mode (--models-dir: /models statuses, load on demand, /slots?model=).
#
#   scripts/llama/smoke.sh            # builds/installs llama-server if needed
#   LULL_LLAMA_SERVER=/path/llama-server scripts/llama/smoke.sh
#
# Everything listens on 127.0.0.1 only. Exit 0 when every check passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
KEY="smoke-$$-key"
work="$(mktemp -d "${TMPDIR:-/tmp}/lull-llama-smoke.XXXXXX")"
pids=()
failures=0

say()  { printf '\n== %s\n' "$*"; }
ok()   { printf '   ok: %s\n' "$*"; }
bad()  { printf '   FAIL: %s\n' "$*"; failures=$((failures + 1)); }
now_ms() { date +%s%3N; }

cleanup() {
  local p
  for p in "${pids[@]}"; do
    # router mode: end the model instances the router spawned, then the router
    pkill -TERM -P "$p" 2>/dev/null || true
    kill -TERM "$p" 2>/dev/null || true
  done
  sleep 0.5
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# get URL [extra curl args] -> prints "HTTP <code>" then the body
get() {
  local url="$1"; shift
  curl -sS -m 5 -w '\nHTTP %{http_code}\n' "$@" "$url" 2>&1
}
code_of() { curl -sS -m 5 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null; }
auth=(-H "Authorization: Bearer $KEY")

wait_health() {  # base timeout_s
  local base="$1" t_end=$(( $(date +%s) + $2 )) c
  while (( $(date +%s) < t_end )); do
    c="$(code_of "$base/health")"
    [[ "$c" == 200 ]] && return 0
    sleep 0.1
  done
  return 1
}

# is any slot processing? reads /slots JSON on stdin; prints true/false
busy_of() { "$python" -c '
import json,sys
try:
    d=json.load(sys.stdin)
except Exception:
    print("error"); sys.exit()
print("true" if isinstance(d,list) and any(s.get("is_processing") for s in d) else "false")'; }

# compact view of /slots: the fields Lull reads
slots_brief() { "$python" -c '
import json,sys
d=json.load(sys.stdin)
def nt(s):
    n = s.get("next_token")
    if isinstance(n, list): n = n[0] if n else {}
    return (n or {}).get("n_decoded")
print(json.dumps([{k:s.get(k) for k in ("id","id_task","n_ctx","is_processing")} | {"n_decoded": nt(s)} for s in d]))'; }

# stream_and_drop BASE MODEL_FIELD SLOTS_QUERY: starts a streamed chat
# completion, shows the slot busy, kills the client, measures until free.
stream_and_drop() {
  local base="$1" model="$2" q="$3" body out="$work/stream.$RANDOM"
  body="{\"model\":\"$model\",\"stream\":true,\"max_tokens\":2000,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"
  curl -sS -N -m 120 "${auth[@]}" -H 'Content-Type: application/json' \
    -d "$body" "$base/v1/chat/completions" >"$out" 2>&1 &
  local cpid=$!
  local t0; t0=$(now_ms)
  local seen=""
  for _ in $(seq 1 100); do
    [[ "$(curl -sS -m 2 "${auth[@]}" "$base/slots$q" | busy_of)" == true ]] && { seen=1; break; }
    sleep 0.05
  done
  if [[ -n "$seen" ]]; then
    ok "slot busy $(( $(now_ms) - t0 )) ms after the request was sent"
    local busy; busy="$(curl -sS -m 2 "${auth[@]}" "$base/slots$q")"
    echo "   /slots$q (busy, brief): $(echo "$busy" | slots_brief)"
    [[ -n "${SHOW_BUSY:-}" ]] && echo "   /slots$q (busy, full): $(echo "$busy" | head -c 6000)"
  else
    bad "never saw a busy slot"
  fi
  sleep 1
  echo "   stream so far: $(wc -c <"$out") bytes, $(grep -c '^data: ' "$out") data lines; first two chunks:"
  grep -m2 '^data: ' "$out" | cut -c1-400 | sed 's/^/     /'
  # Poll /slots over one keep-alive connection every ~2 ms from the moment
  # the client is killed (spawning curl per poll would add ~50 ms each).
  local lat freed=""
  lat="$("$python" - "$base" "/slots$q" "$KEY" "$cpid" <<'PY'
import http.client, json, os, signal, sys, time, urllib.parse
base, path, key, cpid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
u = urllib.parse.urlsplit(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=2)
def busy():
    c.request("GET", path, headers={"Authorization": "Bearer " + key})
    return any(s.get("is_processing") for s in json.loads(c.getresponse().read()))
os.kill(cpid, signal.SIGKILL)
t0 = time.monotonic()
while time.monotonic() - t0 < 3:
    if not busy():
        print(round((time.monotonic() - t0) * 1000)); sys.exit(0)
    time.sleep(0.002)
print(-1)
PY
)"
  wait "$cpid" 2>/dev/null
  [[ "$lat" =~ ^[0-9]+$ ]] && freed=1 || lat=3000
  if [[ -n "$freed" ]]; then
    if (( lat <= 1000 )); then ok "slot free ${lat} ms after the client was killed"
    else bad "slot free only ${lat} ms after the client was killed (> 1000)"; fi
  else
    bad "slot still busy ${lat} ms after the client was killed"
  fi
  echo "   /slots$q (after drop, brief): $(curl -sS -m 2 "${auth[@]}" "$base/slots$q" | slots_brief)"
  [[ -n "${SHOW_BUSY:-}" ]] && echo "   idle slot keys after use: $(curl -sS -m 2 "${auth[@]}" "$base/slots$q" | "$python" -c 'import json,sys; print(sorted(json.load(sys.stdin)[0]))')"
}

# ---------------------------------------------------------------------------
say "llama-server binary"
if ! BIN="$("$here/ensure-llama-server.sh" | tail -n1)" || [[ -z "$BIN" ]]; then
  echo "cannot get llama-server"; exit 1
fi
echo "   $BIN"
"$BIN" --version 2>&1 | sed 's/^/   /'

"$python" -c 'import gguf' 2>/dev/null || "$python" -m pip install -q -r "$here/requirements.txt" >&2
model="$work/models/lull-tiny.gguf"
mkdir -p "$work/models"
"$python" "$here/make_tiny_gguf.py" "$model" || { echo "cannot write the model"; exit 1; }
echo "   model: $model ($(stat -c %s "$model") bytes)"

# ---------------------------------------------------------------------------
say "single-model mode"
port="$(free_port)"; base="http://127.0.0.1:$port"
cmd=("$BIN" -m "$model" --host 127.0.0.1 --port "$port" --api-key "$KEY"
     -c 4096 -np 1 --threads 1 --no-webui)
echo "   \$ ${cmd[*]}"
"${cmd[@]}" >"$work/single.log" 2>&1 &
pids+=($!)
t0=$(now_ms)
first="$(get "$base/health")"
echo "   /health right after start: $(echo "$first" | tr '\n' ' ')"
if wait_health "$base" 60; then ok "/health 200 after $(( $(now_ms) - t0 )) ms"
else bad "/health never 200"; tail -n 30 "$work/single.log"; exit 1; fi

for ep in /health /v1/models /models /slots /props; do
  echo "   GET $ep (no key):    $(get "$base$ep" | tr '\n' ' ' | cut -c1-300)"
  echo "   GET $ep (wrong key): $(get "$base$ep" -H 'Authorization: Bearer nope' | tr '\n' ' ' | cut -c1-300)"
  echo "   GET $ep (key):       $(get "$base$ep" "${auth[@]}" | tr '\n' ' ' | cut -c1-700)"
done
[[ "$(code_of "${auth[@]}" "$base/v1/models")" == 200 ]] && ok "/v1/models 200 with the key" || bad "/v1/models"
[[ "$(code_of -H 'Authorization: Bearer nope' "$base/v1/models")" == 401 ]] && ok "wrong key -> 401" || bad "wrong key not 401"
echo "   /slots idle (full): $(curl -sS -m 5 "${auth[@]}" "$base/slots" | head -c 3000)"
[[ "$(curl -sS -m 5 "${auth[@]}" "$base/slots" | busy_of)" == false ]] && ok "/slots idle" || bad "/slots not idle"

say "streamed completion, slot busy, client dropped (single-model)"
mid="$(curl -sS "${auth[@]}" "$base/v1/models" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')"
SHOW_BUSY=1 stream_and_drop "$base" "$mid" ""
stream_and_drop "$base" "$mid" ""
stream_and_drop "$base" "$mid" ""

say "full streamed completion: timing"
t0=$(now_ms)
curl -sS -N -m 60 "${auth[@]}" -H 'Content-Type: application/json' \
  -d '{"stream":true,"max_tokens":800,"messages":[{"role":"user","content":"hi"}]}' \
  "$base/v1/chat/completions" >"$work/full.sse"
echo "   800 tokens streamed in $(( $(now_ms) - t0 )) ms; $(grep -c '^data: ' "$work/full.sse") data lines; last three:"
tail -n 6 "$work/full.sse" | grep -v '^$' | cut -c1-600 | sed 's/^/     /'
grep -q 'data: \[DONE\]' "$work/full.sse" && ok "stream ends with [DONE]" || bad "no [DONE]"

say "embeddings on the completion server (no --embeddings)"
echo "   $(get "$base/v1/embeddings" "${auth[@]}" -H 'Content-Type: application/json' -d '{"input":"hello"}' | tr '\n' ' ' | cut -c1-400)"

# ---------------------------------------------------------------------------
say "embeddings mode"
eport="$(free_port)"; ebase="http://127.0.0.1:$eport"
ecmd=("$BIN" -m "$model" --host 127.0.0.1 --port "$eport" --api-key "$KEY"
      -c 2048 -np 1 --threads 1 --no-webui --embeddings --pooling mean)
echo "   \$ ${ecmd[*]}"
"${ecmd[@]}" >"$work/embed.log" 2>&1 &
pids+=($!)
if wait_health "$ebase" 60; then
  r="$(get "$ebase/v1/embeddings" "${auth[@]}" -H 'Content-Type: application/json' -d '{"input":["hello","world"],"model":"x"}')"
  echo "   POST /v1/embeddings: $(echo "$r" | tr '\n' ' ' | cut -c1-300)"
  [[ "$(echo "$r" | tail -n1)" == "HTTP 200" ]] && ok "/v1/embeddings 200" || bad "/v1/embeddings"
  echo "   POST /v1/chat/completions on an --embeddings server: $(get "$ebase/v1/chat/completions" "${auth[@]}" -H 'Content-Type: application/json' -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":5}' | tr '\n' ' ' | cut -c1-400)"
else
  bad "embeddings server never healthy"; tail -n 20 "$work/embed.log"
fi

# ---------------------------------------------------------------------------
say "sleeping (--sleep-idle-seconds): which GETs wake the model?"
sport="$(free_port)"; sbase="http://127.0.0.1:$sport"
scmd=("$BIN" -m "$model" --host 127.0.0.1 --port "$sport" --api-key "$KEY"
      -c 2048 -np 1 --threads 1 --no-webui --sleep-idle-seconds 1)
echo "   \$ ${scmd[*]}"
"${scmd[@]}" >"$work/sleep.log" 2>&1 &
pids+=($!)
sleeping() { curl -sS -m 2 "${auth[@]}" "$sbase/props" | "$python" -c 'import json,sys; print(json.load(sys.stdin).get("is_sleeping"))'; }
if wait_health "$sbase" 60; then
  for _ in $(seq 1 50); do [[ "$(sleeping)" == True ]] && break; sleep 0.1; done
  echo "   /props is_sleeping: $(sleeping)"
  for ep in /health /v1/models /models /props /slots; do
    code_of "${auth[@]}" "$sbase$ep" >/dev/null
    sleep 0.2
    echo "   after GET $ep: is_sleeping=$(sleeping)"
  done
else
  bad "sleep server never healthy"
fi

# ---------------------------------------------------------------------------
say "router mode (--models-dir)"
cp "$model" "$work/models/lull-tiny-b.gguf"
rport="$(free_port)"; rbase="http://127.0.0.1:$rport"
rcmd=("$BIN" --models-dir "$work/models" --models-max 1 --host 127.0.0.1 --port "$rport" --api-key "$KEY"
      -c 4096 -np 1 --threads 1 --no-webui)
echo "   \$ ${rcmd[*]}"
"${rcmd[@]}" >"$work/router.log" 2>&1 &
pids+=($!)
if wait_health "$rbase" 60; then
  ok "router /health 200"
  echo "   GET /health:  $(get "$rbase/health" | tr '\n' ' ')"
  echo "   GET /models (wrong key): $(get "$rbase/models" -H 'Authorization: Bearer nope' | tr '\n' ' ')"
  echo "   GET /models:  $(get "$rbase/models" "${auth[@]}" | tr '\n' ' ' | cut -c1-1500)"
  echo "   GET /v1/models: $(get "$rbase/v1/models" "${auth[@]}" | tr '\n' ' ' | cut -c1-800)"
  echo "   GET /slots (no model): $(get "$rbase/slots" "${auth[@]}" | tr '\n' ' ')"
  rid="$(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print(sorted(m["id"] for m in json.load(sys.stdin)["data"])[0])')"
  echo "   model id: $rid"
  echo "   GET /slots?model=$rid (unloaded, autoload=false): $(get "$rbase/slots?model=$rid&autoload=false" "${auth[@]}" | tr '\n' ' ' | cut -c1-300)"
  echo "   GET /models after that: $(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print([(m["id"], m["status"]) for m in json.load(sys.stdin)["data"]])')"
  t0=$(now_ms)
  get "$rbase/models/load" "${auth[@]}" -H 'Content-Type: application/json' -d "{\"model\":\"$rid\"}" >"$work/load.out" &
  lpid=$!
  prev=""
  for i in $(seq 1 200); do
    st="$(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print(" ".join(m["id"]+"="+m["status"]["value"] for m in json.load(sys.stdin)["data"]))')"
    [[ "$st" != "$prev" ]] && echo "   +$(( $(now_ms) - t0 )) ms statuses: $st  (/health: $(code_of "$rbase/health"))"
    prev="$st"
    [[ "$st" == *"$rid=loaded"* ]] && break
    sleep 0.02
  done
  wait "$lpid"
  echo "   POST /models/load answered: $(tr '\n' ' ' <"$work/load.out")"
  echo "   loaded after $(( $(now_ms) - t0 )) ms"
  echo "   GET /models (loaded): $(get "$rbase/models" "${auth[@]}" | tr '\n' ' ' | cut -c1-1500)"
  echo "   GET /v1/models (loaded): $(get "$rbase/v1/models" "${auth[@]}" | tr '\n' ' ' | cut -c1-1200)"
  echo "   GET /slots?model=$rid: $(curl -sS -m 5 "${auth[@]}" "$rbase/slots?model=$rid" | slots_brief)"
  stream_and_drop "$rbase" "$rid" "?model=$rid"
  stream_and_drop "$rbase" "$rid" "?model=$rid"
  stream_and_drop "$rbase" "$rid" "?model=$rid"
  say "router: on-demand load of the second model via a completion (models-max 1)"
  rid2="$(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print(sorted(m["id"] for m in json.load(sys.stdin)["data"])[1])')"
  t0=$(now_ms)
  r="$(get "$rbase/v1/chat/completions" "${auth[@]}" -H 'Content-Type: application/json' -d "{\"model\":\"$rid2\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")"
  echo "   non-streamed completion on $rid2 (loads on demand) in $(( $(now_ms) - t0 )) ms: $(echo "$r" | tr '\n' ' ' | cut -c1-600)"
  echo "   statuses: $(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print([(m["id"], m["status"]["value"]) for m in json.load(sys.stdin)["data"]])')"
  echo "   GET /slots?model=$rid (evicted): $(get "$rbase/slots?model=$rid&autoload=false" "${auth[@]}" | tr '\n' ' ' | cut -c1-300)"
  echo "   POST /models/unload: $(get "$rbase/models/unload" "${auth[@]}" -H 'Content-Type: application/json' -d "{\"model\":\"$rid2\"}" | tr '\n' ' ')"
  sleep 1
  echo "   statuses: $(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print([(m["id"], m["status"]["value"]) for m in json.load(sys.stdin)["data"]])')"
  echo "   GET /slots?model=$rid2 (unloaded, no autoload param): $(get "$rbase/slots?model=$rid2" "${auth[@]}" | tr '\n' ' ' | cut -c1-300)"
  echo "   statuses after that (autoload!): $(curl -sS "${auth[@]}" "$rbase/models" | "$python" -c 'import json,sys; print([(m["id"], m["status"]["value"]) for m in json.load(sys.stdin)["data"]])')"
else
  bad "router never healthy"; tail -n 30 "$work/router.log"
fi

say "result"
if (( failures )); then echo "$failures check(s) failed (work dir kept: $work)"; KEEP_WORK=1; exit 1; fi
echo "all checks passed"
