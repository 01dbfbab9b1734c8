#!/usr/bin/env bash
# Build the installable package: target/release/bundle/deb/umwelt_<version>_amd64.deb.
# The models and libonnxruntime travel inside it, so the app works offline from the first launch.
# Needs what scripts/setup.sh installs (it is run first).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}
models=${UMWELT_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/umwelt/models}

bash scripts/setup.sh

# whisper.cpp is built for x86-64 with AVX2, FMA and F16C, whatever CPU builds it: the flags are
# in .cargo/config.toml, so the tests run the same whisper.cpp as the package.

echo "package: release build (app + CLI)" >&2
cargo build --release --workspace --bins --features umwelt-app/custom-protocol

stage=src-tauri/stage
rm -rf "$stage" && mkdir -p "$stage/models"
cp "$CARGO_TARGET_DIR/release/umwelt-cli" "$stage/"
# The files the app loads at run time (not the sources the set-up converts from).
while IFS=$'\t' read -r name source _; do
  case $name in ''|'#'*|src/*) continue ;; esac
  mkdir -p "$stage/models/$(dirname "$name")"
  cp "$models/$name" "$stage/models/$name"
done < models/manifest.tsv

# The models and the CLI are added at bundle time only (src-tauri/packaging/deb.conf.json), so
# ordinary builds do not need the stage folder.
npx tauri bundle --bundles deb --config src-tauri/packaging/deb.conf.json
ls -l "$CARGO_TARGET_DIR"/release/bundle/deb/*.deb
