#!/usr/bin/env bash
# Coverage-guided fuzzing of every target in fuzz/ with cargo-fuzz (libFuzzer, nightly).
#
#   scripts/fuzz/run.sh [seconds-per-target] [target...]
#
# Each target runs for the given time (default 120 s) from its saved corpus in
# fuzz/corpus/<target>/; the inputs libFuzzer finds that reach new code are merged back into a
# scratch copy, never into the repository. A crash stops the run with libFuzzer's report and the
# input saved under fuzz/artifacts/<target>/: copy it into fuzz/corpus/<target>/ once fixed, and
# tests/corpus.rs replays it on stable from then on. One summary line per target goes to stdout
# and to target/fuzz-results.txt.
set -euo pipefail

log() { printf 'fuzz: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-120}"
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^lull-fuzz$')
fi

rustup toolchain list | grep -q '^nightly' \
  || die "cargo-fuzz needs a nightly toolchain: rustup toolchain install nightly --profile minimal"
if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz (once, a few minutes)"
  cargo install --locked cargo-fuzz
fi

log "building ${targets[*]} (release, sanitizer coverage; minutes on a cold cache)"
cargo +nightly fuzz build --features libfuzzer -O

results=target/fuzz-results.txt
: >"$results"
for target in "${targets[@]}"; do
  scratch="$(mktemp -d)"
  cp -r "fuzz/corpus/$target/." "$scratch/"
  out="$(mktemp)"
  log "$target: ${seconds} s"
  if ! cargo +nightly fuzz run --features libfuzzer -O "$target" "$scratch" -- \
      -max_total_time="$seconds" -print_final_stats=1 >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    die "$target crashed; its input is in fuzz/artifacts/$target/"
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n1)"
  cov="$(grep -o 'cov: [0-9]*' "$out" | tail -n1 | cut -d' ' -f2)"
  line="$target: ${runs:-?} executions in ${seconds} s, coverage ${cov:-?} edges, 0 crashes"
  printf '%s\n' "$line" | tee -a "$results"
  rm -rf "$scratch" "$out"
done
