#!/usr/bin/env bash
# Coverage-guided fuzzing of every target in fuzz/ with libFuzzer, on the stable toolchain.
#
#   scripts/fuzz/run.sh [seconds-per-target] [target...]
#
# The targets are built as cargo-fuzz builds them (libfuzzer-sys, LLVM's sanitizer-coverage
# passes, `--cfg fuzzing`, debug assertions and overflow checks on), without AddressSanitizer:
# the code under test is safe Rust, and this way neither nightly nor cargo-fuzz is needed. The
# build goes to target/fuzz (its flags differ from every other build's); the first one takes
# about three minutes on two cores, later ones seconds.
#
# Each target runs for the given time (default 120 s) from a scratch copy of its saved corpus
# in fuzz/corpus/<target>/, so the repository never changes by itself. A crash stops the run
# with libFuzzer's report and the input saved under fuzz/artifacts/<target>/: once fixed, copy
# it into fuzz/corpus/<target>/ and fuzz/tests/corpus.rs replays it in `make test` from then on.
# One summary line per target goes to stdout and to target/fuzz-results.txt. FUZZ_SEED fixes
# libFuzzer's seed, so a run repeats the same inputs in the same order, as far as time allows
# (`make test` fixes it, so CI does not fail on a new input found by chance; `make fuzz` does not).
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

host="$(rustc -vV | sed -n 's/^host: //p')"
# The target is named so that these flags reach the fuzzed code but not build scripts and
# proc macros, as cargo-fuzz does.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
log "building ${targets[*]} (release, sanitizer coverage)"
cargo build --release --locked -p lull-fuzz --features libfuzzer --bins \
  --target "$host" --target-dir target/fuzz
bin="target/fuzz/$host/release"

results=target/fuzz-results.txt
: >"$results"
for target in "${targets[@]}"; do
  scratch="$(mktemp -d)"
  cp -r "fuzz/corpus/$target/." "$scratch/"
  artifacts="fuzz/artifacts/$target"
  mkdir -p "$artifacts"
  out="$(mktemp)"
  log "$target: ${seconds} s"
  if ! "$bin/$target" "$scratch" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    die "$target broke a promise; its input is in $artifacts/"
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n1)"
  cov="$(grep -o 'cov: [0-9]*' "$out" | tail -n1 | cut -d' ' -f2)"
  line="$target: ${runs:-?} executions in ${seconds} s, coverage ${cov:-?} edges, 0 crashes"
  printf '%s\n' "$line" | tee -a "$results"
  rm -rf "$scratch" "$out"
done
