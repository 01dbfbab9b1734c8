//! The committed retrieval set (`benches/data/retrieval/`, written by `scripts/retrieval-set.py`):
//! 60 target notes, 120 questions that paraphrase them and 10 000 everyday distractor notes,
//! built into a memory file the way a user's three years of notes would be. The harness's
//! quality scenarios ask its questions; `scripts/retrieval-eval.py` asks the same through the CLI.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::corpus::Rng;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::store::{NewMemory, Store};

const TARGETS: &str = include_str!("../../benches/data/retrieval/targets.tsv");
const QUESTIONS: &str = include_str!("../../benches/data/retrieval/questions.tsv");
const DISTRACTORS: &str = include_str!("../../benches/data/retrieval/distractors.txt");

/// The scope the set is written to.
pub const SCOPE: &str = "retrieval";
/// The last note is made at this time (2026-12-01 20:00 UTC, unix ms); the questions are asked
/// five days later ([`RetrievalSet::asked_at`]), so recency ranks the same in every run.
const LAST_NOTE_AT: i64 = 1_796_155_200_000;
/// The notes span three years.
const SPAN_MS: i64 = 3 * 365 * 86_400_000;

/// A question and the target note that answers it.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: &'static str,
    /// The id of its target in `targets.tsv` (`t01`).
    pub target: &'static str,
}

/// The set, as committed.
#[derive(Debug)]
pub struct RetrievalSet {
    /// `(id, text)`, in file order.
    pub targets: Vec<(&'static str, &'static str)>,
    pub questions: Vec<Question>,
    pub distractors: Vec<&'static str>,
}

/// A memory file holding the set: which memory is which target.
#[derive(Debug)]
pub struct BuiltSet {
    /// `(target id, memory id)`.
    pub targets: Vec<(&'static str, i64)>,
    pub distractors: usize,
}

impl BuiltSet {
    /// The memory that answers `q`.
    pub fn answer(&self, q: &Question) -> i64 {
        self.targets
            .iter()
            .find(|(t, _)| *t == q.target)
            .map(|(_, id)| *id)
            .expect("every question names a target (tests/it/retrieval_set.rs)")
    }
}

fn tsv(text: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    text.lines()
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once('\t'))
}

impl RetrievalSet {
    pub fn committed() -> RetrievalSet {
        RetrievalSet {
            targets: tsv(TARGETS).collect(),
            questions: tsv(QUESTIONS)
                .map(|(target, text)| Question { text, target })
                .collect(),
            distractors: DISTRACTORS.lines().filter(|l| !l.is_empty()).collect(),
        }
    }

    /// When the questions are asked (unix ms).
    pub fn asked_at() -> i64 {
        LAST_NOTE_AT + 5 * 86_400_000
    }

    /// Write the targets and the first `distractors` distractor notes into the store at `path`
    /// (scope [`SCOPE`]), embedded with `embedder`: one note every few hours over three years,
    /// the targets at seeded places among them. Checked for `cancel` between batches.
    pub fn build(
        &self,
        path: &Path,
        distractors: usize,
        embedder: &Embedder,
        cancel: &AtomicBool,
    ) -> Result<BuiltSet> {
        if distractors > self.distractors.len() {
            return Err(Error::InvalidInput(format!(
                "the retrieval set has {} distractor notes, not {distractors}",
                self.distractors.len()
            )));
        }
        // Every note in order: `None` is a distractor's index, `Some` a target's.
        let mut order: Vec<(usize, bool)> = (0..distractors).map(|i| (i, false)).collect();
        let mut rng = Rng::new(35);
        for t in 0..self.targets.len() {
            let at = (rng.next() % (order.len() as u64 + 1)) as usize;
            order.insert(at, (t, true));
        }
        let step = SPAN_MS / order.len().max(1) as i64;
        let store = Store::open(path)?;
        let mut built = BuiltSet {
            targets: Vec::with_capacity(self.targets.len()),
            distractors,
        };
        for (chunk_no, chunk) in order.chunks(256).enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let texts: Vec<&str> = chunk
                .iter()
                .map(|&(i, target)| {
                    if target {
                        self.targets[i].1
                    } else {
                        self.distractors[i]
                    }
                })
                .collect();
            let vectors = embedder.embed(&texts)?;
            let first = chunk_no * 256;
            let rows: Vec<(NewMemory, &[f32])> = texts
                .iter()
                .zip(&vectors)
                .enumerate()
                .map(|(j, (text, v))| {
                    let n = (first + j) as i64;
                    let m = NewMemory {
                        scope: SCOPE,
                        session: "notes",
                        text,
                        created_at: Some(LAST_NOTE_AT - (order.len() as i64 - 1 - n) * step),
                        source: Some("import"),
                        ..Default::default()
                    };
                    (m, v.as_slice())
                })
                .collect();
            let ids = store.remember_batch(&rows)?;
            for (&(i, target), id) in chunk.iter().zip(ids) {
                if target {
                    built.targets.push((self.targets[i].0, id));
                }
            }
        }
        store.checkpoint()?;
        Ok(built)
    }
}

/// How well a list of answers found the right note: for each question, the 1-based rank of its
/// target among the hits (`None`: not among them).
pub fn quality(ranks: &[Option<usize>]) -> crate::bench::Quality {
    let n = ranks.len().max(1) as f64;
    let within = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
    crate::bench::Quality {
        questions: ranks.len(),
        recall_at_1: within(1),
        recall_at_5: within(5),
        mrr: ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
            .sum::<f64>()
            / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_set_is_read_whole() {
        let set = RetrievalSet::committed();
        assert_eq!(
            (
                set.targets.len(),
                set.questions.len(),
                set.distractors.len()
            ),
            (60, 120, 10_000)
        );
    }

    #[test]
    fn quality_counts_ranks_within_one_and_five_and_their_reciprocals() {
        let q = quality(&[Some(1), Some(3), None, Some(6)]);
        assert_eq!(q.questions, 4);
        assert_eq!((q.recall_at_1, q.recall_at_5), (0.25, 0.5));
        assert!((q.mrr - (1.0 + 1.0 / 3.0 + 1.0 / 6.0) / 4.0).abs() < 1e-12);
    }
}
