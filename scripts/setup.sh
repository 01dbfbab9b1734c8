#!/usr/bin/env bash
# Install what Umwelt needs on Debian 12 and build it: system packages, npm packages, the web
# frontend, the Rust workspace (app + CLI, release), and the models (fetched while it compiles,
# then checked and converted).
#   scripts/setup.sh          what building and running the app needs
#   scripts/setup.sh --test   that, plus what the tests need (espeak-ng, sox, Xvfb, WebDriver)
# Safe to run again: it installs only what is missing. Runs as root or through sudo.
#
# Every cargo call in scripts/ builds the whole workspace with the same features and the one
# release profile (the tests, the window tests and the package share one build): cargo resolves
# features per selection, and a narrower one (`-p umwelt`) would rebuild whisper.cpp and bindgen.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
want_tests=0; [ "${1:-}" = "--test" ] && want_tests=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

packages=(build-essential pkg-config cmake clang libclang-dev libssl-dev unzip file
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libsoup-3.0-dev
  libasound2-dev alsa-utils libespeak-ng-dev espeak-ng-data python3-venv)
test_packages=(espeak-ng sox ffmpeg xvfb xauth webkit2gtk-driver dbus dbus-x11 xdotool xterm xclip
  sqlite3 gnome-keyring
  desktop-file-utils x11-utils libglib2.0-bin iproute2 util-linux)
[ $want_tests -eq 1 ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for tool in cargo node npm pip; do
  command -v $tool >/dev/null || { echo "setup: '$tool' is missing; install Rust (rustup, 1.89 or newer), Node.js 20 and Python 3 with pip first" >&2; exit 1; }
done

if [ $want_tests -eq 1 ] && ! command -v tauri-driver >/dev/null; then
  echo "setup: installing tauri-driver" >&2
  cargo install tauri-driver --locked --version 2.1.0 --quiet
fi

cd "$here"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-fund --no-audit --loglevel=error
fi
# ui/dist, which the app binary embeds: made again only when the UI's sources are newer (a new
# bundle makes cargo rebuild the app, minutes on two cores). Pruned: ui/dist itself (vite writes
# index.html before the last asset) and ui/node_modules (vite's and vitest's caches, written by
# every build and unit-test run); only files count, as vite also writes and removes a temporary
# file beside its config, which touches the folder ui.
if [ ! -f ui/dist/index.html ] ||
   [ -n "$(find ui package.json package-lock.json \( -path ui/dist -o -path ui/node_modules \) -prune -o -type f -newer ui/dist/index.html -print -quit)" ]; then
  npm run --silent build
fi
# The models download (and Kokoro's graph is rewritten) while Rust compiles; converting whisper
# needs umwelt-cli, so it waits for the build.
bash scripts/setup-models.sh --fetch &
fetching=$!
trap 'kill $fetching 2>/dev/null || true' EXIT
echo "setup: building (first time: Tauri and whisper.cpp take a while)" >&2
cargo build --release --workspace --bins --features umwelt-app/custom-protocol
if ! wait $fetching; then
  echo "setup: fetching the models failed (see above); run scripts/setup.sh again once the cause is fixed" >&2
  exit 1
fi
trap - EXIT
bash scripts/setup-models.sh
