#!/usr/bin/env bash
# Installs what `make run` / `make test` need on a fresh Debian 12 machine, and nothing twice:
# each step checks first, so a second run takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1mbootstrap:\033[0m %s\n' "$*" >&2; }

# Debian packages: WebKitGTK and friends for the Tauri window; Xvfb, D-Bus and X11 tools for the
# desktop smoke test, and python3-dbus + python3-gi for its notification recorder;
# WebKitWebDriver for the window's end-to-end tests and screenshots; cmake for building
# llama-server from source.
APT_PACKAGES=(
  build-essential pkg-config cmake curl file
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev
  xvfb xauth x11-utils dbus libglib2.0-bin imagemagick python3-dbus python3-gi webkit2gtk-driver
)
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Rust tools.
if ! command -v cargo-nextest >/dev/null 2>&1; then
  say "installing cargo-nextest"
  cargo install --locked cargo-nextest
fi
# The WebDriver server the end-to-end tests talk to; it drives WebKitWebDriver.
if ! command -v tauri-driver >/dev/null 2>&1; then
  say "installing tauri-driver"
  cargo install --locked tauri-driver
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

# The UI's npm packages, reinstalled only when the lock file changed.
stamp=ui/node_modules/.lull-lock-stamp
lock_sum=$(sha256sum ui/package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
  say "installing the UI's npm packages"
  npm --prefix ui ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > "$stamp"
fi

# The tiny-model writer for the real llama-server tests.
if ! python3 -c 'import gguf' 2>/dev/null; then
  say "installing the gguf writer (PyPI)"
  python3 -m pip install --quiet --disable-pip-version-check -r scripts/llama/requirements.txt
fi
