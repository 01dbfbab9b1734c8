//! Recall: the `max(4k, 50)` claims of a holder nearest to the query (through its
//! memory-resident index, or an exact scan in SQL with `UMWELT_PERF=off`), ranked by
//! similarity plus recency ([`rank`]), the best `k` read back as [`Hit`]s.

use std::sync::atomic::Ordering;

use rusqlite::params;
use serde::Serialize;

use super::index::VecIndex;
use super::memory::{memory_row, select_memory};
use super::{f32_bytes, Hit, Store, MAX_TEXT_BYTES};
use crate::clock::now_ms;
use crate::embed::EMBED_DIM;
use crate::error::{Error, Result};
use crate::optimisations;

/// Weight of the recency term in the recall score.
pub const RECENCY_WEIGHT: f32 = 0.1;
/// Age at which the recency term has halved.
pub const RECENCY_HALF_LIFE_DAYS: f32 = 30.0;
/// Most hits one recall may ask for.
pub const MAX_K: usize = 1000;

/// How recalls were served, for tests and the harness to prove which path ran.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecallStats {
    /// Served by the vector index (the memory-resident one).
    pub indexed: u64,
    /// Served by an exact scan in SQL (`UMWELT_PERF=off`).
    pub scanned: u64,
}

fn check_k(k: usize) -> Result<usize> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidInput(format!(
            "k must be between 1 and {MAX_K}, not {k}"
        )));
    }
    Ok(k)
}

/// The recency term of a memory made at `created_at`, seen at `now` (both unix ms):
/// `RECENCY_WEIGHT * 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)`; a memory from the future counts
/// as made now.
fn recency(created_at: i64, now: i64) -> f32 {
    let age_days = ((now - created_at).max(0) as f32) / 86_400_000.0;
    RECENCY_WEIGHT * 0.5f32.powf(age_days / RECENCY_HALF_LIFE_DAYS)
}

/// Rank candidates `(id, similarity, created_at)` by `similarity + recency`, best first (on a tie,
/// the higher id first), and keep the best `k` as `(id, similarity, recency)`.
fn rank(nearest: Vec<(i64, f32, i64)>, now: i64, k: usize) -> Vec<(i64, f32, f32)> {
    let mut ranked: Vec<(i64, f32, f32)> = nearest
        .into_iter()
        .map(|(id, similarity, created_at)| (id, similarity, recency(created_at, now)))
        .collect();
    ranked.sort_by(|a, b| (b.1 + b.2).total_cmp(&(a.1 + a.2)).then(b.0.cmp(&a.0)));
    ranked.truncate(k);
    ranked
}

impl Store {
    /// The `k` memories of `scope` (and of `session`, if given) that best answer `query`.
    pub fn recall(
        &self,
        query: &str,
        scope: &str,
        session: Option<&str>,
        k: usize,
    ) -> Result<Vec<Hit>> {
        check_k(k)?;
        let q = query.trim();
        if q.is_empty() {
            return Err(Error::InvalidInput(
                "the search is empty: type what you are looking for".into(),
            ));
        }
        if q.len() > MAX_TEXT_BYTES {
            return Err(Error::InvalidInput(format!(
                "the search is longer than {} KiB",
                MAX_TEXT_BYTES / 1024
            )));
        }
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(Vec::new());
        };
        let vector = self.embedder.get()?.embed_one(q)?;
        self.recall_holder(holder, &vector, session, k, now_ms())
    }

    /// Recall by a ready query vector, ranking recency against `now` (unix ms).
    pub fn recall_vector(
        &self,
        vector: &[f32],
        scope: &str,
        session: Option<&str>,
        k: usize,
        now: i64,
    ) -> Result<Vec<Hit>> {
        check_k(k)?;
        if vector.len() != EMBED_DIM {
            return Err(Error::InvalidInput(format!(
                "a query vector has {EMBED_DIM} dimensions, not {}",
                vector.len()
            )));
        }
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(Vec::new());
        };
        self.recall_holder(holder, vector, session, k, now)
    }

    /// Recall among the claims of `holder` (looked up once by the caller).
    fn recall_holder(
        &self,
        holder: i64,
        vector: &[f32],
        session: Option<&str>,
        k: usize,
        now: i64,
    ) -> Result<Vec<Hit>> {
        let pool = (k * 4).max(50);
        let nearest: Vec<(i64, f32, i64)> = if optimisations::enabled() {
            self.indexed.fetch_add(1, Ordering::Relaxed);
            let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
            if !indexes.contains_key(&holder) {
                let idx = self.load_index(holder)?;
                indexes.insert(holder, idx);
            }
            indexes[&holder]
                .nearest(vector, session, pool)
                .into_iter()
                .map(|s| (s.id, s.similarity, s.created_at))
                .collect()
        } else {
            // The plain path: an exact distance for every vector of the holder, in SQL.
            self.scanned.fetch_add(1, Ordering::Relaxed);
            let conn = self.conn();
            let mut st = conn.prepare_cached(
                "SELECT v.claim_id, 1.0 - vec_distance_cosine(v.embedding, ?1) AS sim, c.created_at
                 FROM claim_vector v JOIN claim c ON c.id = v.claim_id
                 WHERE v.holder_id = ?2 AND (?3 IS NULL OR v.session = ?3) ORDER BY sim DESC, v.claim_id LIMIT ?4",
            )?;
            let rows = st.query_map(
                params![f32_bytes(vector), holder, session, pool as i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let conn = self.conn();
        let mut get =
            conn.prepare_cached(select_memory!("WHERE c.id = ?1 AND h.holder_id = ?2"))?;
        rank(nearest, now, k)
            .into_iter()
            .map(|(id, similarity, recency)| {
                let memory = get.query_row(params![id, holder], memory_row)?;
                Ok(Hit {
                    memory,
                    similarity,
                    recency,
                    score: similarity + recency,
                })
            })
            .collect()
    }

    fn load_index(&self, holder: i64) -> Result<VecIndex> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT v.claim_id, v.session, v.embedding, c.created_at FROM claim_vector v JOIN claim c ON c.id = v.claim_id WHERE v.holder_id = ?1",
        )?;
        let mut rows = st.query([holder])?;
        let mut idx = VecIndex::default();
        let mut v = vec![0f32; EMBED_DIM];
        while let Some(r) = rows.next()? {
            let blob: Vec<u8> = r.get(2)?;
            for (x, c) in v.iter_mut().zip(blob.chunks_exact(4)) {
                *x = f32::from_le_bytes(c.try_into().unwrap());
            }
            let session: String = r.get(1)?;
            idx.upsert(r.get(0)?, &session, r.get(3)?, &v);
        }
        Ok(idx)
    }

    /// Load `scope`'s vectors into memory now rather than on its first recall (the app does this
    /// on its warm-up thread).
    pub fn preload(&self, scope: &str) -> Result<()> {
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(());
        };
        if optimisations::enabled()
            && !self
                .indexes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(&holder)
        {
            let idx = self.load_index(holder)?;
            self.indexes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(holder)
                .or_insert(idx);
        }
        Ok(())
    }

    /// How recalls have been served since the store was opened.
    pub fn recall_stats(&self) -> RecallStats {
        RecallStats {
            indexed: self.indexed.load(Ordering::Relaxed),
            scanned: self.scanned.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn recency_is_worth_a_tenth_when_new_and_halves_every_thirty_days() {
        let now = 1_000 * DAY;
        assert_eq!(recency(now, now), RECENCY_WEIGHT);
        assert!((recency(now - 30 * DAY, now) - 0.05).abs() < 1e-6);
        assert!((recency(now - 60 * DAY, now) - 0.025).abs() < 1e-6);
        // A memory from the future (a clock set back) counts as new, not as more than new.
        assert_eq!(recency(now + DAY, now), RECENCY_WEIGHT);
        assert!(recency(0, now) > 0.0);
    }

    #[test]
    fn the_newer_of_two_equally_close_memories_wins_but_meaning_dominates() {
        let now = 1_000 * DAY;
        let ranked = rank(
            vec![
                (1, 0.8, now - 300 * DAY),
                (2, 0.8, now - DAY),
                (3, 0.95, now - 3_000 * DAY),
                (4, 0.65, now),
            ],
            now,
            10,
        );
        let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        assert_eq!(ids, [3, 2, 1, 4]);
        let (_, similarity, recency) = ranked[1];
        assert_eq!(similarity, 0.8);
        assert!((recency - RECENCY_WEIGHT * 0.5f32.powf(1.0 / 30.0)).abs() < 1e-7);
    }

    #[test]
    fn equal_scores_put_the_higher_id_first_and_k_keeps_the_best() {
        let now = 10 * DAY;
        let ranked = rank(vec![(5, 0.5, now), (9, 0.5, now), (7, 0.9, now)], now, 2);
        assert_eq!(ranked.iter().map(|r| r.0).collect::<Vec<_>>(), [7, 9]);
        assert!(rank(Vec::new(), now, 3).is_empty());
    }
}
