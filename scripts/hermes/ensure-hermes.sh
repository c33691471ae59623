#!/usr/bin/env bash
# Make the real Hermes Agent available for the tests: PyPI's `hermes-agent` (pinned) in a
# virtualenv of its own, in a per-machine cache, installed the first time and reused afterwards.
#
# stdout: the absolute path of the `hermes` command (one line, the last).
# stderr: everything else. Exit status non-zero, with a reason, on failure.
#
# Environment:
#   LULL_HERMES            use this `hermes` as is (skips the install entirely)
#   LULL_CACHE_DIR         cache root (default: $HOME/.cache/lull)
#   HERMES_AGENT_VERSION   hermes-agent version (default: pinned below)
#   PYTHON                 python interpreter with venv and pip (default: python3)
#
# Only PyPI is reached (pip, for hermes-agent and its dependencies); Hermes itself is never run
# here.
set -euo pipefail

log() { printf 'ensure-hermes: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

check_hermes() {
  [[ -x "$1" ]] && "$1" --version >/dev/null 2>&1
}

if [[ -n "${LULL_HERMES:-}" ]]; then
  check_hermes "$LULL_HERMES" || die "LULL_HERMES=$LULL_HERMES is not a working hermes"
  log "using LULL_HERMES"
  printf '%s\n' "$LULL_HERMES"
  exit 0
fi

version="${HERMES_AGENT_VERSION:-0.19.0}"
python="${PYTHON:-python3}"
venv="${LULL_CACHE_DIR:-$HOME/.cache/lull}/hermes/hermes-agent-$version"
hermes="$venv/bin/hermes"

# The marker is written last, so an install cut off half-way is redone, not trusted.
if [[ -f "$venv/.complete" ]] && check_hermes "$hermes"; then
  log "cached: $hermes"
  printf '%s\n' "$hermes"
  exit 0
fi

log "installing hermes-agent==$version from PyPI into $venv (once per machine)"
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if ! "$python" -m venv "$venv" >&2; then
  # Debian's own python3 keeps venv (ensurepip) in a package of its own.
  if [[ "$(command -v "$python")" == /usr/bin/* ]] && command -v apt-get >/dev/null; then
    log "installing python3-venv with apt-get"
    rm -rf "$venv"
    SUDO=""; [[ "$(id -u)" -eq 0 ]] || SUDO="sudo"
    $SUDO apt-get install -y -q python3-venv >&2 || die "apt-get could not install python3-venv"
    "$python" -m venv "$venv" >&2 || die "cannot create a virtualenv with $python"
  else
    die "cannot create a virtualenv with $python (install its venv module, e.g. python3-venv)"
  fi
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "hermes-agent==$version" >&2 \
  || die "pip could not install hermes-agent==$version"
check_hermes "$hermes" || die "$hermes does not answer --version"
touch "$venv/.complete"
log "installed: $hermes"
printf '%s\n' "$hermes"
