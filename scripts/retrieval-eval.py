#!/usr/bin/env python3
"""Measure how well Umwelt finds a note among ten thousand, through the CLI a user has.

Imports the retrieval set (benches/data/retrieval/: distractors.txt, targets.tsv) into a new
memory file, one note every ~2.5 hours over three years with the targets at seeded places among
them, then asks every question of questions.tsv with `umwelt-cli recall` and `umwelt-cli search`
and prints recall@1, recall@5 and MRR (over the top 10) for each.

    python3 scripts/retrieval-eval.py [--cli PATH] [--distractors N] [--keep DIR]

UMWELT_PERF=off in the environment measures the exact paths. Nothing outside a temporary folder
(or --keep DIR) is written; run again with the same --keep DIR to ask again without importing.
"""
import argparse
import datetime
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
SET = HERE / "benches/data/retrieval"


def read_set(distractors: int):
    targets = dict(line.split("\t", 1) for line in (SET / "targets.tsv").read_text().splitlines())
    questions = [tuple(line.split("\t", 1)) for line in (SET / "questions.tsv").read_text().splitlines()]
    notes = (SET / "distractors.txt").read_text().splitlines()[:distractors]
    return targets, questions, notes


def write_notes(folder: pathlib.Path, targets: dict, notes: list) -> None:
    r = random.Random(35)
    all_notes = list(notes)
    for text in targets.values():
        all_notes.insert(r.randrange(len(all_notes) + 1), text)
    end = datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.timezone.utc)
    step = datetime.timedelta(days=3 * 365) / len(all_notes)
    for i, text in enumerate(all_notes):
        at = end - step * (len(all_notes) - 1 - i)
        created = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        (folder / f"note-{i:05}.md").write_text(f"---\ncreated: {created}\n---\n{text}\n")


def ask(cli: str, db: pathlib.Path, command: str, question: str) -> list:
    out = subprocess.run([cli, command, "--db", str(db), "--k", "10", "--json", question],
                         check=True, capture_output=True, text=True).stdout
    hits = json.loads(out)
    return [h.get("text") or h.get("memory", {}).get("text", "") for h in hits]


def main() -> None:
    ap = argparse.ArgumentParser()
    default_cli = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", pathlib.Path.home() / ".cache/umwelt/target")) / "release/umwelt-cli"
    ap.add_argument("--cli", default=str(default_cli))
    ap.add_argument("--distractors", type=int, default=10_000)
    ap.add_argument("--keep")
    ap.add_argument("--show-misses", action="store_true")
    a = ap.parse_args()
    targets, questions, notes = read_set(a.distractors)
    work = pathlib.Path(a.keep or tempfile.mkdtemp(prefix="umwelt-retrieval-"))
    db = work / "memories.sqlite"
    if db.exists():
        # A kept file from an earlier run with the same set: ask again without importing.
        print(f"asking {db} again (delete it to import anew)", file=sys.stderr)
    else:
        notes_dir = work / "notes"
        notes_dir.mkdir(parents=True, exist_ok=True)
        write_notes(notes_dir, targets, notes)
        t = time.time()
        subprocess.run([a.cli, "import", "--db", str(db), str(notes_dir)], check=True, stdout=subprocess.DEVNULL)
        print(f"imported {len(notes) + len(targets)} notes in {time.time() - t:.1f} s", file=sys.stderr)
    for command in ("recall", "search"):
        at1 = at5 = rr = 0.0
        for target, question in questions:
            hits = ask(a.cli, db, command, question)
            want = targets[target]
            rank = next((i + 1 for i, h in enumerate(hits) if h.strip() == want), None)
            at1 += rank == 1
            at5 += rank is not None and rank <= 5
            rr += 1 / rank if rank else 0
            if a.show_misses and (rank is None or rank > 5):
                print(f"  {command} miss ({rank}): {question!r} -> {hits[:3]}", file=sys.stderr)
        n = len(questions)
        print(f"{command}: recall@1 {at1 / n:.3f}  recall@5 {at5 / n:.3f}  MRR {rr / n:.3f}  ({n} questions, {len(notes)} distractors)")


if __name__ == "__main__":
    main()
