#!/usr/bin/env bash
# Umwelt against its peers, in one run on this machine: Umwelt's scenarios (release build), then
# each peer on the same data shape, query set and model files (scripts/peers/peers.py), written
# as one harness report with `peer` rows that the dashboard imports like any run.
#
#   scripts/bench-peers.sh [OUT.json] [--sizes 10000,100000] [--what vectors,embed,stt,tts]
#
# The peers live in a private Python environment (~/.cache/umwelt/peers-venv), pinned by
# scripts/peers/requirements.txt: not in the .deb, not needed by users. Needs the models of
# scripts/setup-models.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs/bench/peers-$(date +%Y-%m-%d).json}
shift || true
sizes=10000,100000; what=vectors,embed,stt,tts
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --what) what=$2; shift 2 ;;
    *) echo "bench-peers: unknown option $1" >&2; exit 1 ;;
  esac
done
cache=${XDG_CACHE_HOME:-$HOME/.cache}/umwelt
venv=$cache/peers-venv
models=${UMWELT_MODELS_DIR:-$cache/models}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$cache/target}

if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/scripts/peers/requirements.txt" "$venv/requirements.txt"; then
  echo "bench-peers: making the peers' environment in $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --only-binary :all: -r "$here/scripts/peers/requirements.txt"
  cp "$here/scripts/peers/requirements.txt" "$venv/requirements.txt"
fi

cargo build --quiet --release -p umwelt --bin umwelt-cli
cli=$CARGO_TARGET_DIR/release/umwelt-cli
ours=$(mktemp --suffix .json); part=$(mktemp --suffix .json); trap 'rm -f "$ours" "$part"' EXIT
# The vector search runs as many queries on each side (numpy answers 200; Umwelt's harness
# would take 30 samples by default, whose p50 a cold first few move).
queries=200
scenarios=()
case ,$what, in *,embed,*) scenarios+=(embed) ;; esac
case ,$what, in *,stt,*) scenarios+=(stt) ;; esac
case ,$what, in *,tts,*) scenarios+=(speak_first_audio) ;; esac
echo '{"results": []}' > "$ours"
merge() { python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
b["results"] = a["results"] + b["results"]
b["command"] = "  ;  ".join(c for c in (a.get("command"), b["command"]) if c)
json.dump(b, open(sys.argv[1], "w"))' "$ours" "$part"; }
case ,$what, in *,vectors,*)
  "$cli" bench --scenario recall_nofilter --sizes "$sizes" --iterations $queries --json "$part" >&2
  merge ;;
esac
if [ ${#scenarios[@]} -gt 0 ]; then
  "$cli" bench --scenario "$(IFS=,; echo "${scenarios[*]}")" --sizes "$sizes" --json "$part" >&2
  merge
fi
"$venv/bin/python" "$here/scripts/peers/peers.py" --umwelt "$ours" --out "$out" \
  --models "$models" --sizes "$sizes" --what "$what" --cli "$cli" --queries $queries
echo "bench-peers: wrote $out" >&2
