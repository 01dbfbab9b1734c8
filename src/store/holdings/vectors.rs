//! Claims by meaning and by words: `embedding_put`, and search over what one holder holds or
//! over every fact and event (the narrator).
//!
//! Every claim's vector is kept in memory once (the claim index: 4-bit codes and f32, as
//! `index.rs` keeps a holder's memories), loaded on the first search. A holder's search scores
//! only the claims the holder holds in the view (the set comes from the file, so isolation is a
//! filter); the narrator's scores every fact and event. Both take a first pass on the codes and
//! re-score the best in f32, or score all in f32 when exact (and when `UMWELT_PERF=off`).
//! Rows are labelled by partition: `n` a narrated claim on main, `o` an opinion on main, and
//! `n{D}` / `o{D}` the same made in draft D.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::view::{Resolved, DRAFT_COLS};
use super::{check_batch, ClaimId, DraftId, HolderId, Kind, View};
use crate::embed::EMBED_DIM;
use crate::error::{Error, Result};
use crate::store::full_vectors::SpillTo;
use crate::store::index::{side_file_failed, IdBuild, QueryCode, VecIndex, CODE_BYTES};
use crate::store::recall::check_k;
use crate::store::{f32_bytes, fusion, write_tx, Store, COMMON_DOCS, WRITES};
use std::sync::atomic::Ordering;

/// One holder's held claims' 4-bit codes side by side, with their rows in the claim index (for
/// the f32 re-scoring), as of a (data_version, writes) pair.
pub(crate) struct HeldCodes {
    version: (i64, u64),
    rows: Vec<u32>,
    scale: Vec<f32>,
    codes: Vec<u8>,
}

/// Who reads: one holder (what it holds), or the narrator (every fact and event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Reader {
    Holder(HolderId),
    Narrator,
}

/// Why a hit ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ClaimWhy {
    /// Its rank among the word matches (1 = best), if its words matched.
    pub keyword_rank: Option<u32>,
    pub bm25: Option<f64>,
    /// Its rank by meaning (1 = nearest), if it was among the nearest.
    pub meaning_rank: Option<u32>,
    pub similarity: Option<f32>,
}

/// One claim found by a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ClaimHit {
    pub claim: ClaimId,
    pub text: String,
    pub kind: Kind,
    /// The fused score: the sum of 1 / (RRF_K + rank) over the lists it is in.
    pub score: f64,
    pub why: ClaimWhy,
}

fn label(kind: &str, draft: Option<DraftId>) -> String {
    let k = if kind == "opinion" { "o" } else { "n" };
    match draft {
        Some(d) => format!("{k}{d}"),
        None => k.to_string(),
    }
}

/// Every claim vector in the file (a large index's f32 vectors in a side file: [`SpillTo`]).
fn load(conn: &Connection, spill_to: Option<SpillTo>) -> Result<VecIndex> {
    let mut idx = VecIndex::new(spill_to);
    let mut st = conn.prepare(
        "SELECT v.claim_id, c.kind, c.draft_id, v.embedding FROM claim_vector v JOIN claim c ON c.id = v.claim_id",
    )?;
    let mut rows = st.query([])?;
    let mut v = vec![0f32; EMBED_DIM];
    while let Some(r) = rows.next()? {
        let blob: Vec<u8> = r.get(3)?;
        for (x, c) in v.iter_mut().zip(blob.chunks_exact(4)) {
            *x = f32::from_le_bytes(c.try_into().expect("4 bytes"));
        }
        let kind: String = r.get(1)?;
        idx.upsert(r.get(0)?, &label(&kind, r.get(2)?), 0, &v)
            .map_err(side_file_failed)?;
    }
    Ok(idx)
}

fn data_version(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("PRAGMA data_version")?
        .query_row([], |r| r.get(0))?)
}

/// A vector checked and brought to unit length.
fn unit(v: &[f32]) -> Result<Vec<f32>> {
    if v.len() != EMBED_DIM {
        return Err(Error::InvalidInput(format!(
            "a vector has {EMBED_DIM} dimensions, not {}",
            v.len()
        )));
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !n.is_finite() || n == 0.0 {
        return Err(Error::InvalidInput(
            "a vector must be finite and not all zero".into(),
        ));
    }
    Ok(v.iter().map(|x| x / n).collect())
}

/// The claims `holder` holds in the view.
fn held(conn: &Connection, view: &Resolved, holder: HolderId) -> Result<Vec<ClaimId>> {
    let overlay = view.overlay(
        conn,
        &format!("SELECT {DRAFT_COLS} FROM draft_holding WHERE draft_id = ?1 AND holder_id = ?2"),
        holder,
    )?;
    let mut out: Vec<ClaimId> = match &view.axis {
        None => conn
            .prepare_cached("SELECT claim_id FROM holding WHERE holder_id = ?1")?
            .query_map([holder], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?,
        Some(a) => conn
            .prepare_cached(
                "SELECT h.claim_id FROM holding h JOIN holding_axis x ON x.holder_id = h.holder_id AND x.claim_id = h.claim_id
                 WHERE h.holder_id = ?1 AND x.axis = ?2 AND x.pos <= ?3",
            )?
            .query_map(params![holder, a.name, a.pos], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?,
    };
    if overlay.is_empty() {
        return Ok(out);
    }
    // The drafts' word replaces main's for the holdings they speak of.
    out.retain(|id| !overlay.contains_key(&(holder, *id)));
    for row in overlay.values().flatten() {
        if view.on_axis(conn, row)? {
            out.push(row.claim);
        }
    }
    Ok(out)
}

impl Store {
    /// Put vectors for claims (replacing any they had), in one transaction. `model` names what
    /// made them (the embedder's id, or "random-unit" for generated ones).
    pub fn embedding_put(&self, rows: &[(ClaimId, &[f32])], model: &str) -> Result<()> {
        check_batch(rows.len(), "vectors")?;
        let units = rows
            .iter()
            .map(|(_, v)| unit(v))
            .collect::<Result<Vec<_>>>()?;
        let mut labels = Vec::with_capacity(rows.len());
        {
            let mut conn = self.conn();
            let tx = write_tx(&mut conn)?;
            {
                let mut claim = tx.prepare_cached(
                    "SELECT c.kind, c.draft_id,
                            COALESCE((SELECT holder_id FROM holding WHERE claim_id = c.id AND provenance = 'authored' LIMIT 1),
                                     (SELECT holder_id FROM draft_holding WHERE claim_id = c.id LIMIT 1), 0)
                     FROM claim c WHERE c.id = ?1",
                )?;
                let mut put = tx.prepare_cached(
                    "INSERT OR REPLACE INTO claim_vector(claim_id, holder_id, session, model, embedding) VALUES (?1, ?2, '', ?3, ?4)",
                )?;
                for ((id, _), v) in rows.iter().zip(&units) {
                    let (kind, draft, author): (String, Option<DraftId>, i64) = claim
                        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                        .optional()?
                        .ok_or_else(|| Error::NotFound(format!("claim {id}")))?;
                    put.execute(params![id, author, model, f32_bytes(v)])?;
                    labels.push(label(&kind, draft));
                }
            }
            tx.commit()?;
        }
        let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(idx) = claims.as_mut() {
            let put = rows
                .iter()
                .zip(&units)
                .zip(&labels)
                .try_for_each(|(((id, _), v), l)| idx.upsert(*id, l, 0, v));
            if let Err(e) = put {
                // It loads again, whole, at the next search.
                tracing::warn!("dropping the claim index: {}", side_file_failed(e));
                *claims = None;
            }
        }
        Ok(())
    }

    /// Claims made in `draft` now belong to `into` (a merge): relabel them in the claim index.
    pub(super) fn claims_moved(&self, draft: DraftId, into: Option<DraftId>) {
        let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(idx) = claims.as_mut() {
            for k in ["n", "o"] {
                let Some(from) = idx.partition(&format!("{k}{draft}")) else {
                    continue;
                };
                let to = label(if k == "o" { "opinion" } else { "fact" }, into);
                let ids: Vec<i64> = idx
                    .ids()
                    .iter()
                    .copied()
                    .filter(|&id| idx.partition_of(id) == Some(from))
                    .collect();
                for id in ids {
                    idx.set_partition(id, &to);
                }
            }
        }
    }

    /// Load the claim index, and each holder's codes, now (the first search does otherwise).
    pub fn preload_claims(&self) -> Result<()> {
        let conn = self.conn();
        self.with_claims(&conn, |_| Ok(()))?;
        let holders: Vec<HolderId> = conn
            .prepare_cached("SELECT id FROM holder")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let q = vec![1.0 / (EMBED_DIM as f32).sqrt(); EMBED_DIM];
        for h in holders {
            self.nearest_held_on_main(&conn, h, &q, 1)?;
        }
        Ok(())
    }

    /// Run `f` on the claim index, loaded or brought up to date first (another connection
    /// wrote since it was last used: read again).
    fn with_claims<T>(
        &self,
        conn: &Connection,
        f: impl FnOnce(&VecIndex) -> Result<T>,
    ) -> Result<T> {
        let version = data_version(conn)?;
        let mut claims = self.claims.lock().unwrap_or_else(|p| p.into_inner());
        if claims.as_ref().is_none_or(|i| i.synced != version) {
            let mut idx = load(conn, self.spill_to())?;
            idx.synced = version;
            *claims = Some(idx);
            // Their rows point into the index that was.
            self.held_codes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
        }
        f(claims.as_ref().expect("loaded"))
    }

    /// The `k` claims nearest to `q` that the reader sees in the view, with their similarity:
    /// exactly (every candidate in f32) when `exact`, else a first pass on the 4-bit codes and the best few
    /// hundred re-scored in f32 (the harness measures how often that is the exact top-k).
    pub fn nearest_claims(
        &self,
        reader: Reader,
        view: &View,
        q: &[f32],
        k: usize,
        exact: bool,
    ) -> Result<Vec<(ClaimId, f32)>> {
        let k = check_k(k)?;
        let q = unit(q)?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let v = self.resolved(&tx, view)?;
        self.nearest_in(
            &tx,
            reader,
            &v,
            &q,
            k,
            exact || !crate::optimisations::enabled(),
        )
    }

    fn nearest_in(
        &self,
        conn: &Connection,
        reader: Reader,
        v: &Resolved,
        q: &[f32],
        k: usize,
        exact: bool,
    ) -> Result<Vec<(ClaimId, f32)>> {
        match reader {
            Reader::Holder(h) => {
                if !conn
                    .prepare_cached("SELECT 1 FROM holder WHERE id = ?1")?
                    .exists([h])?
                {
                    return Err(Error::NotFound(format!("holder {h}")));
                }
                if v.chain.is_empty() && v.axis.is_none() && !exact {
                    return self.nearest_held_on_main(conn, h, q, k);
                }
                let ids = held(conn, v, h)?;
                self.with_claims(conn, |idx| {
                    Ok(idx
                        .nearest_among(q, ids.into_iter(), k, exact)
                        .map_err(side_file_failed)?
                        .into_iter()
                        .map(|s| (s.id, s.similarity))
                        .collect())
                })
            }
            Reader::Narrator => {
                let mut check =
                    conn.prepare_cached("SELECT kind, draft_id FROM claim WHERE id = ?1")?;
                self.with_claims(conn, |idx| {
                    let mut parts: Vec<u32> = Vec::new();
                    parts.extend(idx.partition("n"));
                    for d in &v.chain {
                        parts.extend(idx.partition(&format!("n{d}")));
                    }
                    // A few more than asked: a claim deleted by another path since the index
                    // was loaded is dropped below.
                    let found = idx
                        .nearest_where(q, k + 8, exact, &|p| parts.contains(&p))
                        .map_err(side_file_failed)?;
                    let mut out = Vec::with_capacity(k);
                    for s in found {
                        let row: Option<(String, Option<DraftId>)> = check
                            .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))
                            .optional()?;
                        if let Some((kind, d)) = row {
                            if kind != "opinion" && v.sees_claim(d) && out.len() < k {
                                out.push((s.id, s.similarity));
                            }
                        }
                    }
                    Ok(out)
                })
            }
        }
    }

    /// One holder's nearest on main, from the codes of what it holds kept side by side: 12 600
    /// scattered rows read from the claim index cost 2.7 ms, the same codes in a row 0.3 ms.
    /// Kept while this process writes nothing and no other connection commits.
    fn nearest_held_on_main(
        &self,
        conn: &Connection,
        holder: HolderId,
        q: &[f32],
        k: usize,
    ) -> Result<Vec<(ClaimId, f32)>> {
        let version = (data_version(conn)?, WRITES.load(Ordering::Acquire));
        self.with_claims(conn, |idx| {
            let mut cache = self.held_codes.lock().unwrap_or_else(|p| p.into_inner());
            if cache.get(&holder).is_none_or(|c| c.version != version) {
                let ids = held(
                    conn,
                    &Resolved {
                        chain: Vec::new(),
                        axis: None,
                    },
                    holder,
                )?;
                let mut c = HeldCodes {
                    version,
                    rows: Vec::with_capacity(ids.len()),
                    scale: Vec::with_capacity(ids.len()),
                    codes: Vec::with_capacity(ids.len() * CODE_BYTES),
                };
                for id in ids {
                    if let Some(row) = idx.row_of(id) {
                        let (code, scale) = idx.code(row);
                        c.rows.push(row as u32);
                        c.scale.push(scale);
                        c.codes.extend_from_slice(code);
                    }
                }
                cache.insert(holder, c);
            }
            let c = &cache[&holder];
            let kernels = crate::kernels::current();
            let qc = QueryCode::new(q);
            let mut dots = vec![0i32; c.rows.len()];
            kernels.dot_u4_rows(&qc.q, &c.codes, &mut dots);
            let mut approx: Vec<(f32, u32)> = dots
                .iter()
                .zip(&c.scale)
                .zip(&c.rows)
                .map(|((&dot, &s), &row)| (qc.estimate(dot, s), row))
                .collect();
            let pool = VecIndex::pool_for(k).min(approx.len());
            if pool == 0 {
                return Ok(Vec::new());
            }
            approx.select_nth_unstable_by(pool - 1, |a, b| b.0.total_cmp(&a.0));
            let picked: Vec<usize> = approx[..pool].iter().map(|&(_, r)| r as usize).collect();
            let mut out: Vec<(ClaimId, f32)> = idx
                .score_rows(q, &picked)
                .map_err(side_file_failed)?
                .into_iter()
                .map(|s| (s.id, s.similarity))
                .collect();
            out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            out.truncate(k);
            Ok(out)
        })
    }

    /// Hybrid search for a reader in a view: the words of `query` (FTS5 bm25, among what the
    /// reader sees) and its meaning (`vector`, or the query embedded) fused by reciprocal rank;
    /// each hit says why. Query text is always text: FTS5 syntax in it is not syntax.
    pub fn search_claims(
        &self,
        reader: Reader,
        view: &View,
        query: &str,
        vector: Option<&[f32]>,
        k: usize,
    ) -> Result<Vec<ClaimHit>> {
        let k = check_k(k)?;
        let query = crate::store::recall::check_query(query)?;
        let q = match vector {
            Some(v) => unit(v)?,
            None => self.embedder.get()?.embed_one(query)?,
        };
        let pool = (k * 4).max(50);
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let v = self.resolved(&tx, view)?;
        let meaning =
            self.nearest_in(&tx, reader, &v, &q, pool, !crate::optimisations::enabled())?;
        let words = word_ranks(&tx, reader, &v, query, pool, &meaning)?;
        let mut fused: HashMap<ClaimId, ClaimWhy> = HashMap::new();
        for (i, (id, s)) in meaning.iter().enumerate() {
            let w = fused.entry(*id).or_default();
            w.meaning_rank = Some(i as u32 + 1);
            w.similarity = Some(*s);
        }
        for (i, (id, b)) in words.iter().enumerate() {
            let w = fused.entry(*id).or_default();
            w.keyword_rank = Some(i as u32 + 1);
            w.bm25 = *b;
        }
        let scored = fused
            .into_iter()
            .map(|(id, w)| (fusion::score(w.keyword_rank, 1.0, w.meaning_rank), id, w))
            .collect();
        let ranked = fusion::best(scored, k);
        let mut text = tx.prepare_cached("SELECT text, kind FROM claim WHERE id = ?1")?;
        let mut out = Vec::with_capacity(ranked.len());
        for (score, id, why) in ranked {
            let (t, kind): (String, String) =
                text.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            out.push(ClaimHit {
                claim: id,
                text: t,
                kind: Kind::parse(&kind).unwrap_or_default(),
                score,
                why,
            });
        }
        Ok(out)
    }
}

/// The claims the reader sees whose words match `query`, best bm25 first, at most `pool`. When
/// every word is in very many claims (more than [`COMMON_DOCS`]), ranking all of them says
/// little and costs much: the claims nearest in meaning are checked for the words instead.
fn word_ranks(
    conn: &Connection,
    reader: Reader,
    v: &Resolved,
    query: &str,
    pool: usize,
    meaning: &[(ClaimId, f32)],
) -> Result<Vec<(ClaimId, Option<f64>)>> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(crate::store::MAX_QUERY_WORDS)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let mut docs = conn.prepare_cached("SELECT doc FROM claim_fts_vocab WHERE term = ?1")?;
    let mut usable = Vec::new();
    for w in &words {
        let n: i64 = docs.query_row([w], |r| r.get(0)).optional()?.unwrap_or(0);
        if n > 0 && n <= COMMON_DOCS {
            usable.push(format!("\"{w}\""));
        }
    }
    let mut out = Vec::new();
    if usable.is_empty() {
        // Only common words: which of the nearest hold them all, read from their texts (asking
        // FTS5 about one row walks the word's whole list: 5 ms for a word in 300 000 claims).
        let mut text = conn.prepare_cached("SELECT text FROM claim WHERE id = ?1")?;
        for (id, _) in meaning {
            let t: String = text.query_row([id], |r| r.get(0))?;
            let has: HashSet<String> = t
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            if words.iter().all(|w| has.contains(w)) {
                // Ranked among themselves by meaning: bm25 would tell them little apart.
                out.push((*id, None));
            }
        }
        return Ok(out);
    } else {
        let m = usable.join(" OR ");
        let mut st = conn.prepare_cached(
            "SELECT rowid, bm25(claim_fts) AS b FROM claim_fts WHERE claim_fts MATCH ?1 ORDER BY b",
        )?;
        let holds: Option<HashSet<ClaimId, IdBuild>> = match reader {
            Reader::Holder(h) => Some(held(conn, v, h)?.into_iter().collect()),
            Reader::Narrator => None,
        };
        let mut check = conn.prepare_cached("SELECT kind, draft_id FROM claim WHERE id = ?1")?;
        let mut rows = st.query([m])?;
        while let Some(r) = rows.next()? {
            let id: ClaimId = r.get(0)?;
            let keep = match &holds {
                Some(h) => h.contains(&id),
                None => check
                    .query_row([id], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, Option<DraftId>>(1)?))
                    })
                    .optional()?
                    .is_some_and(|(kind, d)| kind != "opinion" && v.sees_claim(d)),
            };
            if keep {
                out.push((id, Some(r.get(1)?)));
                if out.len() == pool {
                    break;
                }
            }
        }
    }
    out.sort_by(|a, b| {
        a.1.unwrap_or(0.0)
            .total_cmp(&b.1.unwrap_or(0.0))
            .then(b.0.cmp(&a.0))
    });
    Ok(out)
}
