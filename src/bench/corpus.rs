//! The synthetic data the scenarios share: a seeded generator and the corpus on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::now_ms;
use crate::embed::EMBED_DIM;
use crate::error::{Error, Result};
use crate::store::{NewMemory, Store};

/// The one scope of every corpus.
pub(crate) const SCOPE: &str = "bench";
/// Sessions in a corpus, named `session-0` to `session-49`.
pub(crate) const SESSIONS: usize = 50;
const DAY_MS: i64 = 86_400_000;
const SPREAD_DAYS: i64 = 400;

/// A small, seeded generator (xorshift64*), so every run measures the same data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    pub fn unit_f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    /// A random unit vector of [`EMBED_DIM`].
    pub fn vector(&mut self) -> Vec<f32> {
        let mut v: Vec<f32> = (0..EMBED_DIM).map(|_| self.unit_f32()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

/// A synthetic store on disk: one scope, 50 sessions, 400 days of timestamps, random vectors.
pub struct Corpus {
    pub path: PathBuf,
    pub size: usize,
    pub now: i64,
}

impl Corpus {
    /// Build a corpus of `size` memories at `path` (seeded: the same every time).
    pub fn build(path: &Path, size: usize) -> Result<Corpus> {
        Corpus::build_cancellable(path, size, &AtomicBool::new(false))
    }

    /// [`Corpus::build`], stopping (with an error) within one batch of 1 000 once `cancel` is set.
    pub fn build_cancellable(path: &Path, size: usize, cancel: &AtomicBool) -> Result<Corpus> {
        let now = now_ms();
        let store = Store::open(path)?;
        let mut rng = Rng::new(42);
        let mut batch = Vec::with_capacity(1000);
        let sessions: Vec<String> = (0..SESSIONS).map(|s| format!("session-{s}")).collect();
        for i in 0..size {
            let session = (rng.next() % SESSIONS as u64) as usize;
            let age = (rng.next() % (SPREAD_DAYS * DAY_MS) as u64) as i64;
            batch.push((i, session, now - age, rng.vector()));
            if batch.len() == 1000 || i + 1 == size {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::InvalidInput("the benchmark was cancelled".into()));
                }
                let texts: Vec<String> = batch
                    .iter()
                    .map(|(i, s, _, _)| {
                        format!("memory {i} from session {s}: a note about topic {}", i % 97)
                    })
                    .collect();
                let rows: Vec<(NewMemory, &[f32])> = batch
                    .iter()
                    .zip(&texts)
                    .map(|((_, s, at, v), t)| {
                        (
                            NewMemory {
                                scope: SCOPE,
                                session: &sessions[*s],
                                text: t,
                                created_at: Some(*at),
                                embed_model: Some("random"),
                                ..Default::default()
                            },
                            v.as_slice(),
                        )
                    })
                    .collect();
                store.remember_batch(&rows)?;
                batch.clear();
            }
        }
        store.checkpoint()?;
        Ok(Corpus {
            path: path.to_path_buf(),
            size,
            now,
        })
    }

    /// A copy of the corpus file for a scenario that changes it.
    pub fn copy_to(&self, path: &Path) -> Result<()> {
        std::fs::copy(&self.path, path).map_err(Error::io(format!(
            "copying the bench corpus to {}",
            path.display()
        )))?;
        Ok(())
    }
}
