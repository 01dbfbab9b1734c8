//! Recall: the `max(4k, 50)` claims of a holder nearest to the query (through its
//! memory-resident index, or an exact scan in SQL with `UMWELT_PERF=off`), ranked by
//! similarity plus recency ([`rank`]), the best `k` read back as [`Hit`]s.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::full_vectors::SpillTo;
use super::index::{side_file_failed, VecIndex};
use super::memory::{memory_row, select_memory};
use super::{diversity, f32_bytes, Hit, Store, MAX_TEXT_BYTES};
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

/// The f32 vectors of a recall's candidates, by id, as the index holds them.
pub(super) type Candidates = HashMap<i64, Vec<f32>>;

/// How recalls were served, for tests and the harness to prove which path ran.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecallStats {
    /// Served by the vector index (the memory-resident one).
    pub indexed: u64,
    /// Served by an exact scan in SQL (`UMWELT_PERF=off`).
    pub scanned: u64,
}

pub(super) fn check_k(k: usize) -> Result<usize> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidInput(format!(
            "k must be between 1 and {MAX_K}, not {k}"
        )));
    }
    Ok(k)
}

/// `query` trimmed, if it is neither empty nor longer than a memory may be.
pub(super) fn check_query(query: &str) -> Result<&str> {
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
    Ok(q)
}

/// The recency term of a memory made at `created_at`, seen at `now` (both unix ms):
/// `RECENCY_WEIGHT * 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)`; a memory from the future counts
/// as made now.
pub(super) fn recency(created_at: i64, now: i64) -> f32 {
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
        let q = check_query(query)?;
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
    ///
    /// One read transaction holds the candidates and the rows read back to one snapshot of the
    /// file, so a memory another process deletes meanwhile is either wholly there or wholly gone.
    pub(super) fn recall_holder(
        &self,
        holder: i64,
        vector: &[f32],
        session: Option<&str>,
        k: usize,
        now: i64,
    ) -> Result<Vec<Hit>> {
        self.with_nearest(holder, vector, session, k, |tx, nearest, mut vectors| {
            let mut get =
                tx.prepare_cached(select_memory!("WHERE c.id = ?1 AND h.holder_id = ?2"))?;
            // Absent only if another process deleted it between this process's own write and
            // that write reaching the index (the index was synced in this snapshot).
            let mut read = |id: i64| get.query_row(params![id, holder], memory_row).optional();
            let ranked = rank(nearest, now, usize::MAX);
            let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
            let mut hits = Vec::with_capacity(k);
            // Near-copies are told by the candidates' vectors: the index's copies where it
            // served the recall (read from memory or its side file, not a row each from the
            // file: at 100 000 memories, 50 pages of the file to read and, encrypted, decrypt).
            let groups = match vectors.as_mut() {
                Some(vs) => diversity::collapse_by(ids.len(), k, |i| Ok(vs.remove(&ids[i]))),
                None => diversity::collapse(tx, &ids, k),
            }?;
            for group in groups {
                let (id, similarity, recency) = ranked[group.lead];
                let Some(memory) = read(id)? else { continue };
                let mut similar = Vec::with_capacity(group.similar.len());
                for i in group.similar {
                    similar.extend(read(ranked[i].0)?);
                }
                hits.push(Hit {
                    memory,
                    similarity,
                    recency,
                    score: similarity + recency,
                    similar,
                });
            }
            Ok(hits)
        })
    }

    /// [`Store::recall_holder`] without reading the memories back: ids, similarity and recency,
    /// best first (a search reads back only the few it returns), and the candidates' vectors
    /// where the index served them (for the near-copies check).
    pub(super) fn nearest_ranked(
        &self,
        holder: i64,
        vector: &[f32],
        session: Option<&str>,
        k: usize,
        now: i64,
    ) -> Result<(Vec<(i64, f32, f32)>, Candidates)> {
        self.with_nearest(holder, vector, session, k, |_, nearest, vectors| {
            Ok((rank(nearest, now, k), vectors.unwrap_or_default()))
        })
    }

    /// The candidates for the `k` nearest (`max(4k, 50)` of them: id, similarity, time), read
    /// in one transaction that `then` may read on in, and where the index served them, their
    /// f32 vectors too (by id; `None` from the SQL scan).
    fn with_nearest<T>(
        &self,
        holder: i64,
        vector: &[f32],
        session: Option<&str>,
        k: usize,
        then: impl FnOnce(&rusqlite::Transaction, Vec<(i64, f32, i64)>, Option<Candidates>) -> Result<T>,
    ) -> Result<T> {
        let pool = (k * 4).max(50);
        // Lock order: indexes before conn.
        let mut indexes = optimisations::enabled()
            .then(|| self.indexes.lock().unwrap_or_else(|p| p.into_inner()));
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut candidates = None;
        let nearest: Vec<(i64, f32, i64)> = if let Some(indexes) = indexes.as_mut() {
            self.indexed.fetch_add(1, Ordering::Relaxed);
            let idx = synced_index(indexes, &tx, holder, self.spill_to())?;
            let found = idx.nearest(vector, session, pool).and_then(|found| {
                let ids: Vec<i64> = found.iter().map(|s| s.id).collect();
                candidates = Some(ids.iter().copied().zip(idx.vectors_of(&ids)?).collect());
                Ok(found)
            });
            match found {
                Ok(found) => found
                    .into_iter()
                    .map(|s| (s.id, s.similarity, s.created_at))
                    .collect(),
                Err(e) => {
                    indexes.remove(&holder);
                    return Err(side_file_failed(e));
                }
            }
        } else {
            // The plain path: an exact distance for every vector of the holder, in SQL.
            self.scanned.fetch_add(1, Ordering::Relaxed);
            let mut st = tx.prepare_cached(
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
        drop(indexes);
        let out = then(&tx, nearest, candidates)?;
        tx.commit()?;
        Ok(out)
    }

    /// Load `scope`'s vectors into memory now rather than on its first recall (the app does this
    /// on its warm-up thread), and drop the pages that loading left in SQLite's cache.
    pub fn preload(&self, scope: &str) -> Result<()> {
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(());
        };
        if optimisations::enabled() {
            let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            synced_index(&mut indexes, &tx, holder, self.spill_to())?;
            tx.commit()?;
            // Loading read every vector through SQLite's page cache (up to 64 MiB, 15 MiB for
            // 10 000 memories); the index holds them now, so that copy goes (the pages a read
            // needs later come back from the system's cache). rss_warm: 350.8 -> 328.5 MiB.
            conn.execute_batch("PRAGMA shrink_memory")?;
        }
        Ok(())
    }

    /// The bytes the loaded vector indexes hold in memory (every holder's).
    pub fn index_bytes(&self) -> usize {
        let indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        indexes.values().map(VecIndex::heap_bytes).sum()
    }

    /// How recalls have been served since the store was opened.
    pub fn recall_stats(&self) -> RecallStats {
        RecallStats {
            indexed: self.indexed.load(Ordering::Relaxed),
            scanned: self.scanned.load(Ordering::Relaxed),
        }
    }
}

/// `holder`'s index, loaded on first use, and first brought up to date with whatever another
/// connection (another process, or this one's journal) committed since it was last used:
/// `PRAGMA data_version` changes only then, and reading it costs a microsecond or two. This
/// process's own writes reach loaded indexes as they commit. Call it inside the read transaction
/// the caller goes on reading from, so the index and the rows agree. A large index's f32
/// vectors go to a side file ([`SpillTo`]).
fn synced_index<'a>(
    indexes: &'a mut HashMap<i64, VecIndex>,
    conn: &Connection,
    holder: i64,
    spill_to: Option<SpillTo>,
) -> Result<&'a VecIndex> {
    let version: i64 = conn
        .prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))?;
    if let Some(idx) = indexes.get_mut(&holder) {
        if idx.synced != version {
            if let Err(e) = refresh_index(conn, holder, idx) {
                // Half brought up to date: load it whole next time.
                indexes.remove(&holder);
                return Err(e);
            }
        }
    }
    let idx = match indexes.entry(holder) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(e) => e.insert(load_index(conn, holder, spill_to)?),
    };
    idx.synced = version;
    Ok(idx)
}

/// The columns `add_rows` reads: a vector of `claim_vector v` and its claim `c`'s time.
macro_rules! select_vector {
    ($rest:literal) => {
        concat!(
            "SELECT v.claim_id, v.session, v.embedding, c.created_at FROM claim_vector v JOIN claim c ON c.id = v.claim_id ",
            $rest
        )
    };
}

/// Put every row of `select_vector!` that `rows` yields into `idx`.
fn add_rows(idx: &mut VecIndex, mut rows: rusqlite::Rows) -> Result<()> {
    let mut v = vec![0f32; EMBED_DIM];
    while let Some(r) = rows.next()? {
        let blob: Vec<u8> = r.get(2)?;
        for (x, c) in v.iter_mut().zip(blob.chunks_exact(4)) {
            *x = f32::from_le_bytes(c.try_into().unwrap());
        }
        let session: String = r.get(1)?;
        idx.upsert(r.get(0)?, &session, r.get(3)?, &v)
            .map_err(side_file_failed)?;
    }
    Ok(())
}

/// Every vector of `holder`, read from the file.
fn load_index(conn: &Connection, holder: i64, spill_to: Option<SpillTo>) -> Result<VecIndex> {
    let mut idx = VecIndex::new(spill_to);
    let mut st = conn.prepare(select_vector!("WHERE v.holder_id = ?1"))?;
    add_rows(&mut idx, st.query([holder])?)?;
    Ok(idx)
}

/// Bring a loaded index of `holder` to what the file holds: drop the vectors that are gone, read
/// the ones it lacks. Only the ids are compared (an index-only scan, about a millisecond for
/// 10 000), so a change elsewhere in the file (history, another holder) costs little.
fn refresh_index(conn: &Connection, holder: i64, idx: &mut VecIndex) -> Result<()> {
    let held: HashSet<i64> = conn
        .prepare_cached("SELECT claim_id FROM claim_vector WHERE holder_id = ?1")?
        .query_map([holder], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let gone: Vec<i64> = idx
        .ids()
        .iter()
        .copied()
        .filter(|id| !held.contains(id))
        .collect();
    for id in gone {
        idx.remove(id).map_err(side_file_failed)?;
    }
    let mut one = conn.prepare_cached(select_vector!("WHERE v.claim_id = ?1"))?;
    for id in held {
        if !idx.contains(id) {
            add_rows(idx, one.query([id])?)?;
        }
    }
    Ok(())
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
