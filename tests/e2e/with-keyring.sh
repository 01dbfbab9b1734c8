#!/usr/bin/env bash
# Run "$@" with the real system keyring on this D-Bus session bus: gnome-keyring-daemon's
# Secret Service, its login keyring made and unlocked with a password as a login does. Its
# keyrings live in a folder of this run's own (removed after), never the user's.
# Usage, inside a session bus: dbus-run-session -- bash tests/e2e/with-keyring.sh COMMAND...
set -euo pipefail
dir=$(mktemp -d)
mkdir -m 0700 "$dir/run"
printf 'umwelt-e2e' | XDG_DATA_HOME="$dir/data" XDG_RUNTIME_DIR="$dir/run" HOME="$dir" \
  gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
keyring=$!
trap 'kill $keyring 2>/dev/null; wait $keyring 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
    break
  fi
  sleep 0.1
done
# The tests read this to know the keyring is there (encrypted files expected).
export UMWELT_E2E_KEYRING=1
"$@"
