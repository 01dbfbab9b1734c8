#!/usr/bin/env bash
# The installed app, as a user meets it: the .deb's contents and metadata, install with apt,
# launch from the desktop entry, dictate and search over WebDriver against /usr/bin/umwelt — all
# inside a network namespace with no interface but loopback, so nothing can be fetched — then
# uninstall and check the user's data is still there. Run by scripts/test.sh after package.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}
deb=$(ls "$CARGO_TARGET_DIR"/release/bundle/deb/umwelt_*_amd64.deb | tail -n 1)
passed=0; failed=0
check() { # description, command...
  local what=$1; shift
  if "$@" >/tmp/umwelt-deb-check.log 2>&1; then passed=$((passed + 1)); echo "ok - $what"
  else failed=$((failed + 1)); echo "not ok - $what"; sed 's/^/    /' /tmp/umwelt-deb-check.log | tail -20; fi
}

echo "== package: $deb ($(du -h "$deb" | cut -f1))"
contents=$(dpkg-deb -c "$deb")
control=$(dpkg-deb -f "$deb")
check "installs /usr/bin/umwelt and /usr/bin/umwelt-cli" bash -c 'grep -qE "usr/bin/umwelt$" <<<"$1" && grep -qE "usr/bin/umwelt-cli$" <<<"$1"' _ "$contents"
check "bundles every runtime model and libonnxruntime" bash -c 'for f in ggml-tiny.en.bin minilm-l6-v2-int8.onnx minilm-l6-v2-tokenizer.json libonnxruntime.so.1.31.1 kokoro-v1.0-umwelt.onnx kokoro-vocab.json kokoro-voices/af_heart.bin kokoro-voices/bm_george.bin; do grep -q "usr/lib/umwelt/models/$f" <<<"$1" || { echo "missing $f"; exit 1; }; done' _ "$contents"
check "ships the icon in every hicolor size" bash -c 'for s in 16x16 24x24 32x32 48x48 64x64 128x128 256x256 512x512; do grep -q "usr/share/icons/hicolor/$s/apps/umwelt.png" <<<"$1" || { echo "missing $s"; exit 1; }; done' _ "$contents"
check "declares its dependencies" bash -c 'grep -q "^Depends:.*libwebkit2gtk-4.1-0" <<<"$1" && grep -q "^Depends:.*libasound2" <<<"$1" && grep -q "^Depends:.*libespeak-ng1" <<<"$1" && grep -q "^Depends:.*libssl3" <<<"$1"' _ "$control"
x=$(mktemp -d); dpkg-deb -x "$deb" "$x"
check "the desktop entry passes desktop-file-validate" desktop-file-validate "$x/usr/share/applications/umwelt.desktop"
check "the desktop entry names its window class and keywords" bash -c 'grep -q "^StartupWMClass=umwelt$" "$1" && grep -q "^Keywords=" "$1"' _ "$x/usr/share/applications/umwelt.desktop"

echo "== install"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null
check "apt installed umwelt" dpkg -s umwelt

home=$(mktemp -d)
# No model cache: the installed app must find the models it carries.
export HOME=$home XDG_CACHE_HOME=$home/.cache XDG_DATA_HOME=$home/.local/share UMWELT_MODELS_DIR=
unset UMWELT_MODELS_DIR
check "the CLI finds the bundled models" /usr/bin/umwelt-cli models check
check "the installed voice speaks into a WAV file" bash -c '/usr/bin/umwelt-cli speak --out "$1/voice.wav" "Your appointment is on Thursday." && [ "$(stat -c %s "$1/voice.wav")" -gt 40000 ]' _ "$home"

echo "== launch from the desktop entry, and drive it, with no network"
cat > "$home/offline.sh" <<'INNER'
set -euo pipefail
ip link set lo up
# gio launch starts the app the way a desktop does; wait for its window, check its class, close it.
gio launch /usr/share/applications/umwelt.desktop &
for i in $(seq 1 100); do
  win=$(xwininfo -root -tree 2>/dev/null | awk '/"Umwelt"/ { print $1; exit }')
  [ -n "$win" ] && break; sleep 0.2
done
[ -n "$win" ] || { echo "no Umwelt window appeared"; exit 1; }
xprop -id "$win" WM_CLASS | tee /dev/stderr | grep -q '"umwelt"'
pkill -x umwelt; sleep 1
# The same binary over WebDriver: dictate through the ALSA file microphone, search, reopen.
UMWELT_APP=/usr/bin/umwelt UMWELT_E2E_HOME="$HOME/e2e" node --test --test-concurrency=1 tests/e2e/skeleton.test.mjs
INNER
check "launches from its desktop entry and works offline (dictate, find, reopen)" \
  unshare -n -- xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash tests/e2e/with-keyring.sh bash "$home/offline.sh"
grep -aE '^(WM_CLASS|# (tests|pass|fail))' /tmp/umwelt-deb-check.log | sed 's/^/    /' 

echo "== uninstall"
data=$home/e2e/data
check "the installed app wrote the memories there" test -s "$data/memories.sqlite"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq umwelt >/dev/null
check "uninstalled" bash -c '! dpkg -s umwelt 2>/dev/null | grep -q "Status: install ok installed"'
check "the user's memories survive the uninstall" test -s "$data/memories.sqlite"

echo "deb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
