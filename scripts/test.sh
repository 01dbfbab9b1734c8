#!/usr/bin/env bash
# Install what the tests need, then run every test: the engine (with the real models), the
# command layer, the engine again with UMWELT_PERF=off on encrypted files, the real app window
# under Xvfb (its memory files encrypted, the key in a real keyring), and the installed .deb
# (built, installed, launched offline from its desktop entry, uninstalled).
# Everything is built once, in the release profile: the tests run the code the package ships,
# and the package is made from the binaries the window tests drove.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}
export PATH="$HOME/.cargo/bin:$PATH"
started=$SECONDS
step() { echo "== $1 (at $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s)"; }

step "set-up: packages, npm, the release build, the models"
bash scripts/setup.sh --test
bash scripts/audit.sh
npm run --silent check
npm run --silent test:unit

features=(--release --workspace --features umwelt-app/custom-protocol)
step "cargo test (optimisations on)"
cargo test "${features[@]}"
# The second run is also the suite on encrypted files: every store a test opens without a key
# of its own is encrypted with the public test key (umwelt::store::cipher::test_key). One run
# for both keeps the budget; the first run is plain with the optimisations on.
step "cargo test with UMWELT_PERF=off on encrypted files (every optimisation off, same results)"
UMWELT_PERF=off UMWELT_TEST_ENCRYPTION=on cargo test "${features[@]}"

step "the app window under Xvfb, over WebDriver"
export UMWELT_APP="$CARGO_TARGET_DIR/release/umwelt"
# The real keyring, unlocked for the tests: the memory files they make are encrypted.
xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash tests/e2e/with-keyring.sh npm run --silent test:e2e

step "the installed package"
bash scripts/package.sh
bash tests/deb/test.sh
step "done"
