#!/usr/bin/env bash
# Install what Umwelt needs, build it, and open the window.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}

bash scripts/setup.sh
exec "$CARGO_TARGET_DIR/release/umwelt" "$@"
