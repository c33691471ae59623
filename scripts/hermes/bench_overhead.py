#!/usr/bin/env python3
"""What the Lull plugin costs a Hermes Agent turn when Lull is not there.

Times one-shot ``hermes chat -q … -Q`` runs of the real Hermes Agent against the stand-in
llama-server (a fixed, paced reply, so the model's variance does not drown the figure), in three
set-ups run in turn, round after round:

  without     Hermes as it comes, no plugin
  not-running the plugin set up by ``lull hermes setup``, Lull never started (no api.json)
  killed      the plugin, Lull killed: its api.json names a port nothing listens on

The target (issue 25): a run with the plugin and Lull down is within 5 % + 50 ms of one without
(medians). Prints a Markdown table and writes bench/results/hermes_overhead.json. ``make bench``
runs it::

    python3 scripts/hermes/bench_overhead.py --hermes "$(bash scripts/hermes/ensure-hermes.sh | tail -n1)"
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "bench-stand-in-key"
MODEL = "stand-in-model"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_stand_in(binary, port):
    process = subprocess.Popen(
        [binary, "--port", str(port), "--api-key", KEY, "--pace-ms", "5", "--model", MODEL],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()
    if "listening" not in line:
        process.kill()
        sys.exit("bench_overhead: the stand-in did not start: %r" % line)
    return process


def write_config(home, port):
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.yaml"), "w") as f:
        f.write(
            "model:\n  default: %s\n  provider: custom\n  base_url: http://127.0.0.1:%d/v1\n"
            "  api_key: %s\n  context_length: 65536\n  max_tokens: 96\n"
            "auxiliary:\n  compression:\n    context_length: 65536\n"
            # Hermes's own skill review off in every set-up, so only the plugin differs.
            "skills:\n  creation_nudge_interval: 0\n" % (MODEL, port, KEY)
        )


def one_run(hermes, home, data_dir):
    env = dict(os.environ, HERMES_HOME=home, LULL_DATA_DIR=data_dir)
    started = time.monotonic()
    done = subprocess.run(
        [hermes, "chat", "-q", "Say hi.", "-Q", "-t", "todo", "--max-turns", "1"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - started
    if done.returncode != 0 or "session_id:" not in done.stderr:
        sys.exit("bench_overhead: hermes failed (%s):\n%s\n%s" % (done.returncode, done.stdout, done.stderr))
    return elapsed


def hook_costs(python):
    """The plugin's own time with Lull down, in-process: importing it (a fresh interpreter, so
    an upper bound: Hermes has most of the standard library loaded already), a conversation's
    first turn and hand-over (the failure found), and each later turn (Lull skipped)."""
    code = r"""
import json, sys, tempfile, time
sys.path.insert(0, %r)
t = time.perf_counter(); import lull_hermes; imported = time.perf_counter() - t
from lull_hermes import lull_client
empty = tempfile.mkdtemp()
bridge = lull_hermes.LullBridge(turns=lull_client.LullClient(empty, timeout=lull_hermes.TURN_TIMEOUT_S),
                                reviews=lull_client.LullClient(empty, timeout=lull_hermes.REVIEW_TIMEOUT_S))
history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
def turn(i):
    bridge.pre_api_request(session_id="s", api_request_id=i)
    bridge.post_api_request(session_id="s", api_request_id=i)
    bridge.post_llm_call(session_id="s", assistant_response="hello", conversation_history=history)
    bridge.on_session_end(session_id="s")
t = time.perf_counter(); turn(0); first = time.perf_counter() - t
t = time.perf_counter()
for i in range(1, 1001): turn(i)
later = (time.perf_counter() - t) / 1000
print(json.dumps({"import_ms": imported * 1e3, "first_turn_ms": first * 1e3, "later_turn_us": later * 1e6}))
""" % os.path.join(ROOT, "integrations/hermes")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return {k: round(v, 2) for k, v in json.loads(done.stdout).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hermes", required=True, help="the hermes command")
    parser.add_argument("--lull", default=os.path.join(ROOT, "target/release/lull"))
    parser.add_argument("--stand-in", default=os.path.join(ROOT, "target/release/lull-stand-in"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="lull-hermes-bench-")
    port = free_port()
    stand_in = start_stand_in(args.stand_in, port)
    try:
        plain, with_plugin = os.path.join(work, "hermes-plain"), os.path.join(work, "hermes-lull")
        never, killed = os.path.join(work, "lull-never"), os.path.join(work, "lull-killed")
        for home in (plain, with_plugin):
            write_config(home, port)
        subprocess.run(
            [args.lull, "hermes", "setup", "--hermes-home", with_plugin, "--data-dir", never,
             "--config", os.path.join(never, "config.toml")],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.makedirs(killed, mode=0o700)
        with open(os.path.join(killed, "api.json"), "w") as f:
            json.dump({"base_url": "http://127.0.0.1:%d" % free_port(), "pid": 1}, f)
        with open(os.path.join(killed, "api-token"), "w") as f:
            f.write("x" * 64)
        setups = [("without", plain, never), ("not-running", with_plugin, never), ("killed", with_plugin, killed)]

        times = {name: [] for name, _, _ in setups}
        for name, home, data_dir in setups:  # warm-up: Python's byte-code caches, the page cache
            one_run(args.hermes, home, data_dir)
        for _ in range(args.rounds):
            for name, home, data_dir in setups:
                times[name].append(one_run(args.hermes, home, data_dir))
    finally:
        stand_in.kill()
        stand_in.wait()
        shutil.rmtree(work, ignore_errors=True)

    costs = hook_costs(os.path.join(os.path.dirname(os.path.realpath(args.hermes)), "python3"))
    base = statistics.median(times["without"])
    allowed = 0.05 * base + 0.050
    result = {
        "command": "python3 scripts/hermes/bench_overhead.py --hermes <hermes>",
        "rounds": args.rounds,
        "target_s": round(allowed, 3),
        "setups": {},
        "plugin_alone": costs,
    }
    print("| set-up | median s | min–max s | overhead vs without | paired (per round) | within 5 % + 50 ms |")
    print("|---|---|---|---|---|---|")
    for name, _, _ in setups:
        median = statistics.median(times[name])
        overhead = median - base
        # The runs of one round ran back to back: their difference sheds the machine's drift.
        paired = statistics.median(t - b for t, b in zip(times[name], times["without"]))
        met = name == "without" or overhead <= allowed
        result["setups"][name] = {
            "median_s": round(median, 3),
            "min_s": round(min(times[name]), 3),
            "max_s": round(max(times[name]), 3),
            "overhead_ms": round(overhead * 1000, 1),
            "paired_overhead_ms": round(paired * 1000, 1),
            "met": met,
        }
        print(
            "| %s | %.3f | %.3f–%.3f | %+.0f ms | %+.0f ms | %s |"
            % (name, median, min(times[name]), max(times[name]), overhead * 1000, paired * 1000,
               "—" if name == "without" else ("yes" if met else "**missed**"))
        )
    print(
        "\nthe plugin alone, Lull down: import %.1f ms (fresh interpreter), first turn %.2f ms, "
        "each later turn %.1f µs" % (costs["import_ms"], costs["first_turn_ms"], costs["later_turn_us"])
    )
    if not args.no_write:
        with open(os.path.join(ROOT, "bench/results/hermes_overhead.json"), "w") as f:
            json.dump(result, f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
