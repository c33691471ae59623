#!/usr/bin/env python3
"""How much another client's prompt stalls our stream on the real llama-server.

Issue 16, part 2: the simulator's server (src/sim/server.rs) slows Lull's stream while another
slot is busy; this measures by how much, so the model rests on figures and not on a guess.

It starts llama-server with the given model on two slots and one decode thread (as
tests/real_llama.rs does), then, per run: our client streams a long answer (a review's answer
phase); after a few seconds alone, another client sends a prompt of about `short` or `long`
tokens and a short answer on the other slot. Every streamed token of ours is timestamped, and the
gaps between them are summarised per window: alone, while the other client's prompt is processed
(from its send to its first token), while it decodes (first token to end), and after.

    python3 scripts/llama/measure_stall.py --server "$(bash scripts/llama/ensure-llama-server.sh | tail -n1)" \
        --model "$(bash scripts/llama/ensure-model.sh | tail -n1)" [--runs 3] [--json out.json]

Standard library only (http.client). Prints one JSON object: per prompt size, every run's window
statistics (median and max gap, count, and the total stalled time over the alone pace).
`bench/results/stall.json` is a run with the defaults; `bench/results/stall-3600-tokens.json`
one with `--short 100 --long 2000` (~200 and ~3.6k tokens). Run it with nothing else busy: the
server has one decode thread on a 2-core machine.
"""

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

API_KEY = "lull-measure"
OUR_MAX_TOKENS = 1200
THEIR_MAX_TOKENS = 32
ALONE_S = 3.0
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prompt_of(n_words, rng):
    # A unique prefix defeats the prompt cache between runs; SmolLM2's tokenizer gives about two
    # tokens per word of this vocabulary (the server's `timings.prompt_n` is reported too).
    nonce = "%08x" % rng.getrandbits(32)
    return nonce + " " + " ".join(rng.choice(WORDS) for _ in range(n_words))


def stream(port, prompt, max_tokens, stamps, ignore_eos):
    """POSTs a streamed chat completion; appends (monotonic time, kind) per event to `stamps`."""
    body = json.dumps({
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "stream": True,
        "ignore_eos": ignore_eos,
        "cache_prompt": False,
        "timings_per_token": False,
    })
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    stamps.append((time.monotonic(), "sent"))
    connection.request("POST", "/v1/chat/completions", body, {
        "Content-Type": "application/json",
        "Authorization": "Bearer " + API_KEY,
    })
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError("status %s: %s" % (response.status, response.read()[:300]))
    timings = None
    for raw in response:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[len("data: "):])
        if event.get("timings"):
            timings = event["timings"]
        choices = event.get("choices") or [{}]
        if (choices[0].get("delta") or {}).get("content"):
            stamps.append((time.monotonic(), "token"))
    stamps.append((time.monotonic(), "end"))
    connection.close()
    return timings


def window_stats(gaps, alone_median):
    if not gaps:
        return {"n": 0}
    return {
        "n": len(gaps),
        "median_ms": round(1000 * statistics.median(gaps), 1),
        "max_ms": round(1000 * max(gaps), 1),
        # Time lost over the pace alone, summed: what the other client cost our stream.
        "stalled_s": round(sum(max(0.0, g - alone_median) for g in gaps), 3),
        "span_s": round(sum(gaps), 3),
    }


def one_run(port, their_words, rng):
    ours, theirs = [], []
    our_thread = threading.Thread(
        target=stream, args=(port, prompt_of(60, rng), OUR_MAX_TOKENS, ours, True))
    our_thread.start()
    # Wait until our answer streams, then some seconds alone.
    while sum(1 for _, kind in ours if kind == "token") < 5:
        time.sleep(0.01)
    time.sleep(ALONE_S)
    their_timings = stream(port, prompt_of(their_words, rng), THEIR_MAX_TOKENS, theirs, False)
    time.sleep(ALONE_S)
    sent = theirs[0][0]
    their_tokens = [t for t, kind in theirs if kind == "token"]
    first = their_tokens[0] if their_tokens else theirs[-1][0]
    end = theirs[-1][0]
    our_tokens = [t for t, kind in ours if kind == "token"]
    our_end_seen = any(kind == "end" for _, kind in ours)
    # A gap belongs to the window its closing token falls in.
    windows = {"alone": [], "their_prompt": [], "their_decode": [], "after": []}
    for before, after in zip(our_tokens, our_tokens[1:]):
        gap = after - before
        if after <= sent:
            windows["alone"].append(gap)
        elif after <= first:
            windows["their_prompt"].append(gap)
        elif after <= end:
            windows["their_decode"].append(gap)
        elif after <= end + ALONE_S:
            windows["after"].append(gap)
    # The gap that spans the other prompt's processing may close just after its first token.
    alone_median = statistics.median(windows["alone"])
    spanning = max((a - b for b, a in zip(our_tokens, our_tokens[1:]) if b < first and a > sent),
                   default=0.0)
    our_thread.join()
    return {
        "their_prompt_tokens": (their_timings or {}).get("prompt_n"),
        "their_prompt_ms": (their_timings or {}).get("prompt_ms"),
        "their_time_to_first_token_ms": round(1000 * (first - sent), 1),
        "their_total_ms": round(1000 * (end - sent), 1),
        "our_longest_gap_over_their_prompt_ms": round(1000 * spanning, 1),
        "our_stream_ended_early": our_end_seen and our_tokens[-1] < end,
        "windows": {name: window_stats(g, alone_median) for name, g in windows.items()},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--short", type=int, default=50,
                        help="words of the short prompt (50: ~120 tokens)")
    parser.add_argument("--long", type=int, default=1000,
                        help="words of the long prompt (1000: ~1.8k tokens)")
    parser.add_argument("--threads", default="1")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [args.server, "-m", args.model, "--host", "127.0.0.1", "--port", str(port),
         "--api-key", API_KEY, "-c", "16384", "-np", "2", "--threads", args.threads,
         "--no-webui"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("llama-server did not become healthy")
            time.sleep(0.2)
        rng = random.Random(args.seed)
        # One warm-up stream, not measured.
        stream(port, prompt_of(20, rng), 16, [], False)
        result = {
            "server": args.server, "model": args.model, "slots": 2, "threads": args.threads,
            "load_before": open("/proc/loadavg").read().split()[:3],
            "runs": {},
        }
        for name, words in (("short", args.short), ("long", args.long)):
            result["runs"][name] = [one_run(port, words, rng) for _ in range(args.runs)]
        result["load_after"] = open("/proc/loadavg").read().split()[:3]
        text = json.dumps(result, indent=1)
        print(text)
        if args.json:
            with open(args.json, "w") as out:
                out.write(text + "\n")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
