//! The memory-resident vector index behind recall when optimisations are on.
//!
//! sqlite-vec's `vec0` scans every float of a partition (about 10 ms for 10 000 × 384 here), so
//! the store keeps, per holder, a copy of its vectors twice: in memory as 4-bit codes (one scale
//! per vector, 192 bytes), and as the full f32 vectors (on the heap while the index is small,
//! in a side file once it is large: `full_vectors.rs`). A query, in int8, scores every code with
//! an integer dot product (`crate::kernels`: VNNI or AVX2 when the CPU has them, a block of rows
//! per call), keeps the best couple of hundred as it goes, and re-scores those with the full
//! vectors (fetched a few rows ahead, as they are scattered), so the order
//! it returns is the exact one unless the true neighbours fall outside the candidate pool (the
//! harness measures how often: `recall_nofilter` agreement).
//!
//! A small set (one session) is scored exactly, with no codes at all.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;

use crate::embed::EMBED_DIM;
use crate::kernels::{self, Kernels};

use super::full_vectors::{FullVectors, SpillTo};

/// How many candidates the first pass keeps for every hit finally wanted (at least [`MIN_POOL`]).
const POOL_FACTOR: usize = 4;
const MIN_POOL: usize = 128;
/// Below this many rows an exact f32 scan is cheaper than the two passes.
const EXACT_BELOW: usize = 2048;

/// A hasher for ids: one multiplication (SipHash, the default, cost a third of a search that
/// looks up twelve thousand ids).
#[derive(Default, Clone, Copy)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (self.0 ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map or set keyed by ids, with [`IdHasher`].
pub(super) type IdBuild = BuildHasherDefault<IdHasher>;

/// One holder's vectors.
#[derive(Default)]
pub(super) struct VecIndex {
    ids: Vec<i64>,
    created: Vec<i64>,
    session: Vec<u32>,
    scale: Vec<f32>,
    /// 4-bit codes, [`CODE_BYTES`] a row, packed as [`kernels::pack_u4`] lays them out.
    codes: Vec<u8>,
    full: FullVectors,
    pos: HashMap<i64, usize, IdBuild>,
    sessions: HashMap<String, u32>,
    /// The store connection's `PRAGMA data_version` when this index last matched the file: it
    /// changes when another connection commits, and the index is refreshed before it answers.
    pub synced: i64,
}

/// A candidate: claim id, cosine similarity, created_at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scored {
    pub id: i64,
    pub similarity: f32,
    pub created_at: i64,
}

/// The largest magnitude in `v` (never 0, so it can divide).
fn max_abs(v: &[f32]) -> f32 {
    v.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(1e-12)
}

/// Bytes of one row's 4-bit code.
pub(super) const CODE_BYTES: usize = kernels::u4_bytes(EMBED_DIM);

/// `v` as 4-bit codes (0..=15, 7.5 standing for 0) appended to `out`, packed; returns the row's
/// scale for [`QueryCode::estimate`]: `v[i] ≈ (c[i] - 7.5) · 2·max/15`.
fn quantize_u4(v: &[f32], out: &mut Vec<u8>) -> f32 {
    let max = max_abs(v);
    let k = 7.5 / max;
    let codes: Vec<u8> = v
        .iter()
        .map(|x| (x * k + 7.5).round().clamp(0.0, 15.0) as u8)
        .collect();
    kernels::pack_u4(&codes, out);
    max / 15.0
}

/// A query as the first pass reads it: int8 (its own scale is the same for every row, so it
/// does not change an order), and 15 times the sum of its codes (what the rows' 7.5 offset
/// adds, twice).
pub(super) struct QueryCode {
    pub q: Vec<i8>,
    sum15: i32,
}

impl QueryCode {
    pub(super) fn new(v: &[f32]) -> QueryCode {
        let max = max_abs(v);
        let k = 127.0 / max;
        let q: Vec<i8> = v.iter().map(|x| (x * k).round() as i8).collect();
        let sum15 = 15 * q.iter().map(|&c| c as i32).sum::<i32>();
        QueryCode { q, sum15 }
    }

    /// The estimated similarity (up to the query's scale) of a row whose code gave `dot`
    /// (`Σ q·c`) and whose scale is `scale`: `Σ q·(c - 7.5)·2·max/15`.
    #[inline]
    pub(super) fn estimate(&self, dot: i32, scale: f32) -> f32 {
        (2 * dot - self.sum15) as f32 * scale
    }
}

impl VecIndex {
    /// An empty index whose f32 vectors go to a side file in `spill_dir` once it is large
    /// (always on the heap if `None`).
    pub(super) fn new(spill_to: Option<SpillTo>) -> VecIndex {
        VecIndex {
            full: FullVectors::new(spill_to),
            ..VecIndex::default()
        }
    }

    /// Whether the f32 vectors are in the side file rather than on the heap.
    pub(super) fn spilled(&self) -> bool {
        self.full.spilled()
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The bytes of memory this index keeps resident: every row's code and bookkeeping, the f32
    /// vectors while they are on the heap, and its maps' tables. (Room a vector has grown into
    /// but not filled is left out: the system gives it pages only once written.)
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let row = 2 * size_of::<i64>() + size_of::<u32>() + size_of::<f32>() + CODE_BYTES;
        // A hash map has a control byte for each slot of its table, and a key and value for
        // each entry.
        let pos = self.pos.capacity() + self.pos.len() * size_of::<(i64, usize)>();
        let sessions: usize = self
            .sessions
            .keys()
            .map(|k| k.len() + size_of::<(String, u32)>() + 1)
            .sum();
        self.len() * row + self.full.heap_bytes() + pos + sessions
    }

    /// The ids held, in no particular order.
    pub(super) fn ids(&self) -> &[i64] {
        &self.ids
    }

    pub(super) fn contains(&self, id: i64) -> bool {
        self.pos.contains_key(&id)
    }

    /// Add (or replace) a vector. An error (the side file could not be written) leaves the
    /// index without `id`.
    pub(super) fn upsert(
        &mut self,
        id: i64,
        session: &str,
        created_at: i64,
        v: &[f32],
    ) -> io::Result<()> {
        debug_assert_eq!(v.len(), EMBED_DIM);
        self.remove(id)?;
        self.full.push(v)?;
        let next = self.sessions.len() as u32;
        let s = *self.sessions.entry(session.to_string()).or_insert(next);
        self.pos.insert(id, self.ids.len());
        self.ids.push(id);
        self.created.push(created_at);
        self.session.push(s);
        let scale = quantize_u4(v, &mut self.codes);
        self.scale.push(scale);
        Ok(())
    }

    /// Replace the vector of an id already held (re-embedding); an id not held is left alone.
    /// An error (the side file could not be written) leaves the old vector.
    pub(super) fn update_vector(&mut self, id: i64, v: &[f32]) -> io::Result<()> {
        if let Some(&p) = self.pos.get(&id) {
            let c = CODE_BYTES;
            self.full.set(p, v)?;
            let mut codes = Vec::with_capacity(c);
            self.scale[p] = quantize_u4(v, &mut codes);
            self.codes[p * c..(p + 1) * c].copy_from_slice(&codes);
        }
        Ok(())
    }

    /// Drop a vector (swap-remove: order is not kept). An error (the side file could not be
    /// read or written) leaves the index as it was.
    pub(super) fn remove(&mut self, id: i64) -> io::Result<()> {
        let Some(&p) = self.pos.get(&id) else {
            return Ok(());
        };
        self.full.swap_remove(p)?;
        self.pos.remove(&id);
        let last = self.ids.len() - 1;
        self.ids.swap_remove(p);
        self.created.swap_remove(p);
        self.session.swap_remove(p);
        self.scale.swap_remove(p);
        if p != last {
            let c = CODE_BYTES;
            self.codes.copy_within(last * c..(last + 1) * c, p * c);
            self.pos.insert(self.ids[p], p);
        }
        self.codes.truncate(last * CODE_BYTES);
        Ok(())
    }

    /// The `n` most similar vectors (by exact cosine of unit vectors), optionally in one session:
    /// one session's rows are all scored in f32 while the vectors are on the heap; from the side
    /// file, a first pass on their codes picks the few hundred to read and re-score.
    pub(super) fn nearest(
        &self,
        q: &[f32],
        session: Option<&str>,
        n: usize,
    ) -> io::Result<Vec<Scored>> {
        match session {
            Some(s) => match self.sessions.get(s) {
                Some(&sid) if self.spilled() => {
                    let rows = (0..self.len())
                        .filter(|&i| self.session[i] == sid)
                        .collect();
                    self.best_of(q, rows, n, false)
                }
                Some(&sid) => self.nearest_where(q, n, true, &|p| p == sid),
                None => Ok(Vec::new()),
            },
            None => self.nearest_where(q, n, self.len() <= EXACT_BELOW, &|_| true),
        }
    }

    /// The id of a partition (the label given to `upsert` as its session), if any row has it.
    pub(super) fn partition(&self, label: &str) -> Option<u32> {
        self.sessions.get(label).copied()
    }

    /// The partition of a row.
    pub(super) fn partition_of(&self, id: i64) -> Option<u32> {
        self.pos.get(&id).map(|&p| self.session[p])
    }

    /// Move a row to another partition.
    pub(super) fn set_partition(&mut self, id: i64, label: &str) {
        if let Some(&p) = self.pos.get(&id) {
            let next = self.sessions.len() as u32;
            self.session[p] = *self.sessions.entry(label.to_string()).or_insert(next);
        }
    }

    /// The row of `id`, if it has a vector.
    pub(super) fn row_of(&self, id: i64) -> Option<usize> {
        self.pos.get(&id).copied()
    }

    /// The f32 vectors of `ids`, in that order: ids this index holds (as [`VecIndex::nearest`]
    /// returns them).
    pub(super) fn vectors_of(&self, ids: &[i64]) -> io::Result<Vec<Vec<f32>>> {
        let rows: Vec<usize> = ids.iter().map(|id| self.pos[id]).collect();
        self.full.rows(&rows)
    }

    /// The 4-bit code (packed) and its scale of a row.
    pub(super) fn code(&self, row: usize) -> (&[u8], f32) {
        (
            &self.codes[row * CODE_BYTES..(row + 1) * CODE_BYTES],
            self.scale[row],
        )
    }

    /// How many candidates the first pass keeps for `n` wanted.
    pub(super) fn pool_for(n: usize) -> usize {
        (n * POOL_FACTOR).max(MIN_POOL)
    }

    /// The `n` most similar among the rows of `ids` (ids without a vector are left out): every
    /// one scored in f32 when `exact` or few, else a first pass on the 4-bit codes and the best few hundred
    /// re-scored in f32 (a quarter of the memory read: the rows are scattered over the index).
    pub(super) fn nearest_among(
        &self,
        q: &[f32],
        ids: impl Iterator<Item = i64>,
        n: usize,
        exact: bool,
    ) -> io::Result<Vec<Scored>> {
        let rows: Vec<usize> = ids.filter_map(|id| self.pos.get(&id).copied()).collect();
        self.best_of(q, rows, n, exact || self.len() <= EXACT_BELOW)
    }

    /// The `n` best of `rows` (positions), as [`VecIndex::nearest_among`] scores them.
    fn best_of(
        &self,
        q: &[f32],
        rows: Vec<usize>,
        n: usize,
        exact: bool,
    ) -> io::Result<Vec<Scored>> {
        let out = if exact || rows.len() <= MIN_POOL {
            self.score_rows(q, &rows)?
        } else {
            let k = crate::kernels::current();
            let qc = QueryCode::new(q);
            let rows: Vec<u32> = rows.into_iter().map(|i| i as u32).collect();
            let mut approx = self.estimate_u4(k, &qc, &rows);
            let pool = (n * POOL_FACTOR).max(MIN_POOL).min(approx.len());
            approx.select_nth_unstable_by(pool - 1, |a, b| b.0.total_cmp(&a.0));
            let picked: Vec<usize> = approx[..pool].iter().map(|&(_, i)| i as usize).collect();
            self.score_rows(q, &picked)?
        };
        Ok(best(out, n))
    }

    /// The `n` most similar vectors among the rows whose partition `keep` accepts: every kept
    /// row scored in f32 when `exact`, else a first pass on the 4-bit codes (on two threads
    /// for a large index) and the best few hundred re-scored in f32.
    pub(super) fn nearest_where(
        &self,
        q: &[f32],
        n: usize,
        exact: bool,
        keep: &(impl Fn(u32) -> bool + Sync),
    ) -> io::Result<Vec<Scored>> {
        let k = crate::kernels::current();
        let out: Vec<Scored> = if exact {
            let rows: Vec<usize> = (0..self.len()).filter(|&i| keep(self.session[i])).collect();
            self.score_rows(q, &rows)?
        } else {
            let qc = QueryCode::new(q);
            let want = (n * POOL_FACTOR).max(MIN_POOL);
            // Rows are scored a block at a time (the query's part of the work done once per
            // block); a row the filter leaves out costs its score, not a branch per code. Only
            // the best `want` are kept as it goes: candidates gather until there are twice as
            // many, are cut back to the best `want`, and from then on a row must beat the worst
            // of those to be kept at all.
            let first_pass = |rows: std::ops::Range<usize>| -> Vec<(f32, u32)> {
                let mut out = Vec::with_capacity(2 * want);
                let mut floor = f32::NEG_INFINITY;
                let mut dots = [0i32; SCAN_BLOCK];
                let mut est = [0f32; SCAN_BLOCK];
                let mut start = rows.start;
                while start < rows.end {
                    let end = (start + SCAN_BLOCK).min(rows.end);
                    let dots = &mut dots[..end - start];
                    let codes = &self.codes[start * CODE_BYTES..end * CODE_BYTES];
                    k.dot_u4_rows(&qc.q, codes, dots);
                    // The estimates of the whole block, then a bit for each that reaches the
                    // floor, 64 rows to a word (loops the compiler vectorises, with no branch
                    // per row to mispredict), then only the rows whose bit is set.
                    let est = &mut est[..end - start];
                    let scales = &self.scale[start..end];
                    for ((e, &dot), &scale) in est.iter_mut().zip(&*dots).zip(scales) {
                        *e = qc.estimate(dot, scale);
                    }
                    for (w, chunk) in est.chunks(64).enumerate() {
                        let mut above = chunk
                            .iter()
                            .enumerate()
                            .fold(0u64, |m, (j, &e)| m | u64::from(e >= floor) << j);
                        while above != 0 {
                            let j = above.trailing_zeros() as usize;
                            above &= above - 1;
                            let i = start + 64 * w + j;
                            if keep(self.session[i]) {
                                out.push((chunk[j], i as u32));
                                if out.len() == 2 * want {
                                    let order =
                                        |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0);
                                    out.select_nth_unstable_by(want - 1, order);
                                    out.truncate(want);
                                    floor = out[want - 1].0;
                                }
                            }
                        }
                    }
                    start = end;
                }
                out
            };
            let len = self.len();
            let mut approx = if len >= PARALLEL_FROM && crate::optimisations::threads() > 1 {
                let half = len / 2;
                std::thread::scope(|s| {
                    let other = s.spawn(|| first_pass(half..len));
                    let mut a = first_pass(0..half);
                    a.extend(other.join().expect("the scoring thread does not panic"));
                    a
                })
            } else {
                first_pass(0..len)
            };
            let pool = want.min(approx.len());
            if pool == 0 {
                return Ok(Vec::new());
            }
            approx.select_nth_unstable_by(pool - 1, |a, b| b.0.total_cmp(&a.0));
            let rows: Vec<usize> = approx[..pool].iter().map(|&(_, i)| i as usize).collect();
            self.score_rows(q, &rows)?
        };
        Ok(best(out, n))
    }

    /// The 4-bit estimates of `rows`, scattered over the table (the codes of the next group are
    /// asked of memory while this one is scored): (estimate, row).
    fn estimate_u4(&self, k: &Kernels, qc: &QueryCode, rows: &[u32]) -> Vec<(f32, u32)> {
        const GROUP: usize = 32;
        let mut dots = [0i32; GROUP];
        let mut out = Vec::with_capacity(rows.len());
        let code = |r: u32| &self.codes[r as usize * CODE_BYTES..(r as usize + 1) * CODE_BYTES];
        for &r in rows.iter().take(GROUP) {
            kernels::prefetch(code(r));
        }
        for (g, group) in rows.chunks(GROUP).enumerate() {
            for &r in rows.iter().skip((g + 1) * GROUP).take(GROUP) {
                kernels::prefetch(code(r));
            }
            let dots = &mut dots[..group.len()];
            k.dot_u4_picked(&qc.q, &self.codes, group, dots);
            out.extend(
                group
                    .iter()
                    .zip(&*dots)
                    .map(|(&r, &dot)| (qc.estimate(dot, self.scale[r as usize]), r)),
            );
        }
        out
    }

    /// `rows` (positions, in any order) scored exactly with their f32 vectors.
    pub(super) fn score_rows(&self, q: &[f32], rows: &[usize]) -> io::Result<Vec<Scored>> {
        let mut sims = Vec::with_capacity(rows.len());
        self.full
            .dots(crate::kernels::current(), q, rows, &mut sims)?;
        Ok(rows
            .iter()
            .zip(sims)
            .map(|(&i, similarity)| Scored {
                id: self.ids[i],
                similarity,
                created_at: self.created[i],
            })
            .collect())
    }
}

/// What a failure of an index's side file becomes for the caller: the memory file is fine, the
/// copy of its vectors beside it is not.
pub(super) fn side_file_failed(e: io::Error) -> crate::error::Error {
    crate::error::Error::Io {
        context: "the vector index's side file (a copy of the vectors, beside the memory file) \
                  failed; your memories are unchanged. Check the disk: is it full or failing?"
            .into(),
        source: e,
    }
}

/// After a change the memory file took but holder `holder`'s loaded index could not (its side
/// file failed): drop the index, which loads again from the file when next used.
pub(super) fn drop_failed(indexes: &mut HashMap<i64, VecIndex>, holder: i64, e: io::Error) {
    tracing::warn!(
        "dropping holder {holder}'s vector index, which loads again when next used: {}",
        side_file_failed(e)
    );
    indexes.remove(&holder);
}

/// The `n` most similar of `out`, most similar first (ties: the lower id first).
fn best(mut out: Vec<Scored>, n: usize) -> Vec<Scored> {
    let n = n.min(out.len());
    if n == 0 {
        return Vec::new();
    }
    let order =
        |a: &Scored, b: &Scored| b.similarity.total_cmp(&a.similarity).then(a.id.cmp(&b.id));
    out.select_nth_unstable_by(n - 1, order);
    out.truncate(n);
    out.sort_by(order);
    out
}

/// Rows the first pass scores in one call of the kernel.
const SCAN_BLOCK: usize = 256;

/// From this many rows on, the first pass runs on two threads.
const PARALLEL_FROM: usize = 65_536;

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64) -> Vec<f32> {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut v: Vec<f32> = (0..EMBED_DIM)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter_mut().for_each(|a| *a /= n);
        v
    }

    #[test]
    fn two_pass_search_returns_the_exact_top_k() {
        let mut idx = VecIndex::default();
        for i in 0..5000 {
            idx.upsert(i, if i % 2 == 0 { "a" } else { "b" }, i, &unit(i as u64))
                .unwrap();
        }
        for q in 0..20 {
            let qv = unit(10_000 + q);
            let got: Vec<i64> = idx
                .nearest(&qv, None, 10)
                .unwrap()
                .iter()
                .map(|s| s.id)
                .collect();
            let mut all: Vec<(f32, i64)> = (0..5000)
                .map(|i| ((crate::kernels::PORTABLE.dot_f32)(&qv, &unit(i as u64)), i))
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            let want: Vec<i64> = all[..10].iter().map(|x| x.1).collect();
            assert_eq!(got, want);
        }
        let only_a = idx.nearest(&unit(1), Some("a"), 50).unwrap();
        assert!(only_a.iter().all(|s| s.id % 2 == 0) && only_a.len() == 50);
        assert!(idx.nearest(&unit(1), Some("nope"), 5).unwrap().is_empty());
    }

    /// A row's 4-bit code and scale, with the query's own scale put back, estimate the exact
    /// dot product to within the codes' rounding: half a step per component, at most.
    #[test]
    fn the_estimate_is_the_dot_product_to_within_the_rounding() {
        for seed in 0..50 {
            let (v, q) = (unit(seed), unit(1_000 + seed));
            let mut code = Vec::new();
            let scale = quantize_u4(&v, &mut code);
            assert_eq!(code.len(), CODE_BYTES);
            let qc = QueryCode::new(&q);
            let q_scale = q.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 127.0;
            let dot = crate::kernels::PORTABLE.dot_u4(&qc.q, &code);
            let estimate = qc.estimate(dot, scale) * q_scale;
            let exact: f32 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
            // |error| ≤ Σ|q|·step/2 (the row's rounding) + Σ(|v| + step/2)·q_step/2 (the
            // query's, against the row as its code has it); a code's step is twice its scale.
            let step = 2.0 * scale;
            let bound = q.iter().map(|x| x.abs()).sum::<f32>() * step / 2.0
                + v.iter().map(|x| x.abs() + step / 2.0).sum::<f32>() * q_scale / 2.0;
            assert!(
                (estimate - exact).abs() <= bound,
                "seed {seed}: {estimate} vs {exact}"
            );
            // And far tighter than that bound in practice (the errors do not all line up).
            assert!((estimate - exact).abs() < 0.05, "seed {seed}");
        }
    }

    /// The heap an index reports is at least its vectors and codes, and not much more.
    #[test]
    fn an_index_counts_the_heap_it_holds() {
        let mut idx = VecIndex::default();
        assert!(idx.heap_bytes() < 1024);
        for i in 0..3000 {
            idx.upsert(i, if i % 2 == 0 { "a" } else { "b" }, i, &unit(i as u64))
                .unwrap();
        }
        let floor = 3000 * (4 * EMBED_DIM + CODE_BYTES + 8 + 8 + 4 + 4 + 16);
        let got = idx.heap_bytes();
        assert!(got >= floor && got < 2 * floor, "{got} bytes for {floor}");
    }

    #[test]
    fn removing_keeps_the_rest_findable() {
        let mut idx = VecIndex::default();
        for i in 0..10 {
            idx.upsert(i, "", 0, &unit(i as u64)).unwrap();
        }
        idx.remove(3).unwrap();
        idx.remove(9).unwrap();
        idx.remove(42).unwrap();
        assert_eq!(idx.len(), 8);
        for i in [0, 1, 2, 4, 5, 6, 7, 8] {
            assert_eq!(idx.nearest(&unit(i as u64), None, 1).unwrap()[0].id, i);
        }
        idx.upsert(5, "", 0, &unit(77)).unwrap();
        assert_eq!(idx.nearest(&unit(77), None, 1).unwrap()[0].id, 5);
        assert_eq!(idx.len(), 8);
    }

    /// An index whose f32 vectors went to the side file answers every kind of search as the
    /// same index on the heap does, through upserts, re-embeddings and removals, and holds a
    /// ninth of the heap.
    #[test]
    fn a_spilled_index_answers_as_the_heap_one_does() {
        for sealed in [false, true] {
            a_spilled_index_answers_as_the_heap_one_does_when(sealed);
        }
    }

    fn a_spilled_index_answers_as_the_heap_one_does_when(sealed: bool) {
        let dir = tempfile::tempdir().unwrap();
        let mut heap = VecIndex::default();
        let to = SpillTo {
            dir: dir.path().to_path_buf(),
            sealed,
        };
        let mut file = VecIndex {
            full: FullVectors::spilling_from(Some(to), 1000),
            ..VecIndex::default()
        };
        for idx in [&mut heap, &mut file] {
            for i in 0..4000 {
                let s = ["a", "b", "c"][i as usize % 3];
                idx.upsert(i, s, i, &unit(i as u64)).unwrap();
            }
            for i in (0..4000).step_by(7) {
                idx.remove(i).unwrap();
            }
            for i in (1..4000).step_by(11) {
                idx.update_vector(i, &unit(50_000 + i as u64)).unwrap();
            }
            idx.upsert(3, "a", 3, &unit(99_999)).unwrap();
        }
        assert!(file.spilled() && !heap.spilled());
        assert_eq!(file.len(), heap.len());
        let f32_bytes = heap.len() * EMBED_DIM * 4;
        // A sealed side file keeps each row's nonce on the heap.
        let nonces = if sealed { heap.len() * 8 } else { 0 };
        assert_eq!(heap.heap_bytes() - file.heap_bytes(), f32_bytes - nonces);
        for q in 0..10 {
            let qv = unit(20_000 + q);
            let ids = |v: Vec<Scored>| v.iter().map(|s| s.id).collect::<Vec<i64>>();
            assert_eq!(
                heap.nearest(&qv, None, 10).unwrap(),
                file.nearest(&qv, None, 10).unwrap()
            );
            // One session: every row scored on the heap, the codes' best few hundred from the
            // file; the same ten here.
            assert_eq!(
                ids(heap.nearest(&qv, Some("b"), 10).unwrap()),
                ids(file.nearest(&qv, Some("b"), 10).unwrap())
            );
            let among = || (0..4000).filter(|i| i % 5 == 0);
            for exact in [true, false] {
                assert_eq!(
                    heap.nearest_among(&qv, among(), 10, exact).unwrap(),
                    file.nearest_among(&qv, among(), 10, exact).unwrap()
                );
            }
        }
        assert_eq!(file.nearest(&unit(99_999), None, 1).unwrap()[0].id, 3);
        let some: Vec<i64> = heap.ids().iter().copied().step_by(97).collect();
        assert_eq!(
            heap.vectors_of(&some).unwrap(),
            file.vectors_of(&some).unwrap()
        );
        assert_eq!(file.vectors_of(&[3]).unwrap()[0], unit(99_999));
    }
}
