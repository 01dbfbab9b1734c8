//! Hybrid search: the words of the query (full text, FTS5's bm25) and its meaning (the vector
//! recall, with recency), with the memories that hold the query as an exact phrase first. Every
//! hit says why it ranked where it did ([`Why`]).
//!
//! ```text
//! score = [exact phrase: 1] + similarity + recency + [shares words: WORDS_BONUS · w]
//! ```
//!
//! The candidates are the nearest in meaning and the best by their words; a candidate found by
//! its words only gets its similarity from its stored vector, so every candidate is judged by
//! meaning alike. `w`, from 0 to 1, is the share of the query's word evidence the memory holds
//! ([`fusion::words_weight`]): sharing the query's rare words (a name, a code) is worth up to
//! [`fusion::WORDS_BONUS`] of similarity, sharing only words found in thousands of notes almost
//! nothing (docs/PERFORMANCE.md, issue 35: this measured better than fusing the two lists by
//! reciprocal rank, which let any shared word outrank the note that means the question). Without
//! the model the words' list is fused by reciprocal rank alone ([`fusion::score`]). The user's
//! text is always text: it reaches FTS5 only as quoted words ([`fts_words`]), so FTS5's syntax
//! (`"`, `*`, `NEAR(`, `OR`, `-`, `:`, `^`, parentheses, unbalanced quotes) is never read as
//! syntax. Isolation is a filter, not a ranking hint: both lists are read only among the claims
//! the holder holds. Near-copies of a better hit join it as its similar notes ([`diversity`]).

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::memory::{memory_row, select_memory};
use super::recall::{check_k, check_query, recency, Candidates};
use super::{diversity, fusion, Filter, Memory, Store};
use crate::clock::now_ms;
use crate::error::Result;

/// At most this many words of a query go to the full-text index (a pasted page is still a
/// search, not a denial of service).
pub const MAX_QUERY_WORDS: usize = 64;

/// A memory found by [`Store::search`], and why it ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct SearchHit {
    pub memory: Memory,
    /// What the hits are ordered by (see the module's formula).
    pub score: f32,
    pub why: Why,
    /// Its near-copies among the candidates, best first: shown as "and N similar notes"
    /// rather than each taking a place ([`super::diversity`]).
    #[serde(default)]
    pub similar: Vec<Memory>,
}

/// The parts of a hit's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Why {
    /// The memory holds the query's words as one phrase, in order.
    pub exact_phrase: bool,
    /// Its rank among the memories that share words with the query (1 = best), if it is one.
    pub keyword_rank: Option<u32>,
    /// FTS5's bm25 of it (lower is better), if it shares words.
    pub bm25: Option<f64>,
    /// How much its words' rank counts, 0 to 1: the share of the query's word evidence (the
    /// rarity of the words it shares) it holds. 1 where it shares no words.
    #[serde(default = "full_weight")]
    pub words_weight: f64,
    /// Its rank among the memories nearest in meaning (similarity + recency), if it is one.
    pub meaning_rank: Option<u32>,
    /// Cosine similarity to the query: among the nearest, or found by its words (read from its
    /// stored vector); `None` only without the model.
    pub similarity: Option<f32>,
    /// The recency term (worth at most 0.1, halving every 30 days).
    pub recency: f32,
}

fn full_weight() -> f64 {
    1.0
}

/// The words of `text` (runs of letters and digits), at most [`MAX_QUERY_WORDS`].
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(MAX_QUERY_WORDS)
        .collect()
}

/// An FTS5 query that matches any of the words of `text`, each quoted (so nothing in it is
/// syntax); `None` if it has no words.
pub fn fts_words(text: &str) -> Option<String> {
    let w = words(text);
    (!w.is_empty()).then(|| quoted(&w, " OR "))
}

/// Words (letters and digits only, so never syntax), each quoted, joined by `join`.
fn quoted(words: &[&str], join: &str) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(join)
}

/// An FTS5 query for the words of `text` as one phrase; `None` unless it has two words or more.
pub fn fts_phrase(text: &str) -> Option<String> {
    let w = words(text);
    (w.len() >= 2).then(|| format!("\"{}\"", w.join(" ")))
}

/// The filter of a search by session alone.
fn by_session(session: Option<&str>) -> Filter {
    Filter {
        session: session.map(str::to_string),
        ..Filter::default()
    }
}

impl Store {
    /// The `k` memories of `scope` (and of `session`, if given) that best answer `query`, by
    /// words and by meaning (see the module).
    pub fn search(
        &self,
        query: &str,
        scope: &str,
        session: Option<&str>,
        k: usize,
    ) -> Result<Vec<SearchHit>> {
        self.hybrid(query, None, scope, &by_session(session), k, true, now_ms())
    }

    /// [`Store::search`] among the memories `filter` keeps (session, source, a span of time).
    pub fn search_in(
        &self,
        query: &str,
        scope: &str,
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<SearchHit>> {
        self.hybrid(query, None, scope, filter, k, true, now_ms())
    }

    /// [`Store::search`] with the query's vector already made, ranking recency against `now`
    /// (the benchmark's corpora are embedded with random vectors).
    pub fn search_with_vector(
        &self,
        query: &str,
        vector: &[f32],
        scope: &str,
        session: Option<&str>,
        k: usize,
        now: i64,
    ) -> Result<Vec<SearchHit>> {
        self.hybrid(
            query,
            Some(vector),
            scope,
            &by_session(session),
            k,
            true,
            now,
        )
    }

    /// [`Store::search_in`] with the query's vector already made (the benchmark's corpora and
    /// tests are embedded with random vectors).
    #[allow(clippy::too_many_arguments)]
    pub fn search_in_with_vector(
        &self,
        query: &str,
        vector: &[f32],
        scope: &str,
        filter: &Filter,
        k: usize,
        now: i64,
    ) -> Result<Vec<SearchHit>> {
        self.hybrid(query, Some(vector), scope, filter, k, true, now)
    }

    /// [`Store::search`] by the words alone (no embedding: instant, and usable before the
    /// embedding model has loaded, as results while the user types).
    pub fn search_words(
        &self,
        query: &str,
        scope: &str,
        session: Option<&str>,
        k: usize,
    ) -> Result<Vec<SearchHit>> {
        self.hybrid(query, None, scope, &by_session(session), k, false, now_ms())
    }

    #[allow(clippy::too_many_arguments)]
    fn hybrid(
        &self,
        query: &str,
        vector: Option<&[f32]>,
        scope: &str,
        filter: &Filter,
        k: usize,
        by_meaning: bool,
        now: i64,
    ) -> Result<Vec<SearchHit>> {
        check_k(k)?;
        filter.check()?;
        let q = check_query(query)?;
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(Vec::new());
        };
        let session = filter.session.as_deref();
        // Source and time are applied after the nearest are found: look further when they narrow.
        let narrowed = filter.source.is_some() || filter.from.is_some() || filter.to.is_some();
        let pool = (k * 4).max(50);
        let query_vector = if by_meaning {
            Some(match vector {
                Some(v) => v.to_vec(),
                None => self.embedder.get()?.embed_one(q)?,
            })
        } else {
            None
        };
        // The meaning list's vectors, as the index holds them (for the near-copies check).
        let mut vectors = Candidates::new();
        let meaning = if let Some(vector) = &query_vector {
            let vector = vector.clone();
            if narrowed {
                // Source and time are read from the memories themselves.
                let mut near = self.recall_holder(holder, &vector, session, pool * 8, now)?;
                near.retain(|h| filter.keeps(&h.memory));
                near.truncate(pool);
                near.into_iter()
                    .map(|h| (h.memory.id, h.similarity, h.recency, Some(h.memory)))
                    .collect()
            } else {
                // Only the few returned are read back, below.
                let (near, near_vectors) =
                    self.nearest_ranked(holder, &vector, session, pool, now)?;
                vectors = near_vectors;
                near.into_iter()
                    .map(|(id, similarity, recency)| (id, similarity, recency, None))
                    .collect()
            }
        } else {
            Vec::new()
        };

        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let words = Words {
            tx: &tx,
            holder,
            filter,
            pool,
        };
        let (keywords, query_idf) = words.ranked(q)?;
        let phrase: Vec<i64> = match fts_phrase(q) {
            Some(m) => words
                .matching(&m, Order::Newest)?
                .into_iter()
                .map(|(id, _)| id)
                .collect(),
            None => Vec::new(),
        };

        let mut found: HashMap<i64, (Why, Option<Memory>)> = HashMap::new();
        let blank = || Why {
            exact_phrase: false,
            keyword_rank: None,
            bm25: None,
            words_weight: 1.0,
            meaning_rank: None,
            similarity: None,
            recency: 0.0,
        };
        for (rank, (id, similarity, recency, memory)) in meaning.into_iter().enumerate() {
            let e = found.entry(id).or_insert_with(|| (blank(), None));
            e.0.meaning_rank = Some(rank as u32 + 1);
            e.0.similarity = Some(similarity);
            e.0.recency = recency;
            e.1 = memory;
        }
        for (rank, (id, bm25)) in keywords.into_iter().enumerate() {
            let e = found.entry(id).or_insert_with(|| (blank(), None));
            e.0.keyword_rank = Some(rank as u32 + 1);
            e.0.bm25 = bm25;
            e.0.words_weight = fusion::words_weight(bm25, query_idf);
        }
        // A phrase match counts even when its note is in neither list (among many notes that
        // share the words, it can be in neither's first few dozen).
        for id in phrase {
            found
                .entry(id)
                .or_insert_with(|| (blank(), None))
                .0
                .exact_phrase = true;
        }
        // Found by its words only: its similarity from its stored vector, its recency from its
        // date, so that meaning judges every candidate alike.
        if let Some(qv) = &query_vector {
            let mut created = tx.prepare_cached("SELECT created_at FROM claim WHERE id = ?1")?;
            for (id, (why, _)) in found
                .iter_mut()
                .filter(|(_, (w, _))| w.meaning_rank.is_none())
            {
                why.similarity = diversity::vector(&tx, *id)?.map(|v| diversity::dot(&v, qv));
                let at: Option<i64> = created.query_row(params![id], |r| r.get(0)).optional()?;
                why.recency = at.map_or(0.0, |at| recency(at, now));
            }
        }
        let scored = found
            .into_iter()
            .map(|(id, (why, memory))| {
                let phrase = if why.exact_phrase { 1.0 } else { 0.0 };
                let score = if query_vector.is_some() {
                    let words = why.keyword_rank.map(|_| why.words_weight);
                    phrase + fusion::by_meaning(why.similarity, why.recency, words)
                } else {
                    phrase + fusion::score(why.keyword_rank, why.words_weight, None)
                };
                (score, id, (why, memory))
            })
            .collect();
        // Every candidate in order; near-copies of a better one join it ([`diversity`]).
        let ranked = fusion::best(scored, usize::MAX);
        let ids: Vec<i64> = ranked.iter().map(|r| r.1).collect();
        let groups = diversity::collapse_by(ids.len(), k, |i| match vectors.remove(&ids[i]) {
            Some(v) => Ok(Some(v)),
            None => diversity::vector(&tx, ids[i]),
        })?;
        let mut ranked: Vec<_> = ranked.into_iter().map(Some).collect();

        let mut get = tx.prepare_cached(select_memory!("WHERE c.id = ?1 AND h.holder_id = ?2"))?;
        // A candidate's memory: read with the meaning's list, or read back now (still only
        // among the holder's). `None` if another process deleted it meanwhile.
        let mut memory_of = |id: i64, memory: Option<Memory>| match memory {
            Some(m) => Ok::<_, crate::error::Error>(Some(m)),
            None => Ok(get.query_row(params![id, holder], memory_row).optional()?),
        };
        let mut hits = Vec::with_capacity(groups.len());
        for group in groups {
            let Some((score, id, (mut why, memory))) = ranked[group.lead].take() else {
                continue;
            };
            let Some(memory) = memory_of(id, memory)? else {
                continue;
            };
            if why.meaning_rank.is_none() {
                // Found by its words only: its recency is worked out here.
                why.recency = recency(memory.created_at, now);
            }
            let mut similar = Vec::with_capacity(group.similar.len());
            for i in group.similar {
                if let Some((_, id, (_, m))) = ranked[i].take() {
                    similar.extend(memory_of(id, m)?);
                }
            }
            hits.push(SearchHit {
                memory,
                score: score as f32,
                why,
                similar,
            });
        }
        drop(get);
        tx.commit()?;
        Ok(hits)
    }
}

/// A word in more notes than this is too common to rank by: its weight in bm25 is next to
/// nothing, and ranking every note that holds it is what made a search slow (docs/PERFORMANCE.md:
/// "the" in 100 000 notes, 55 ms). A query of such words alone takes the newest notes that hold
/// them all. The exact phrase and the meaning still use every word.
pub const COMMON_DOCS: i64 = 20_000;
/// The notes that hold *any* of the words are ranked only over the rarest words whose notes add
/// up to this (those that hold *all* the usable words are ranked first, and cheaply: FTS5 reads
/// an intersection from its rarest list). Ranking them by bm25 costs about 1.2 µs a note: at
/// 6 000 it was half of a search among 10 000 (2.1 ms); at 2 000 the retrieval set finds as
/// many notes (docs/PERFORMANCE.md, "Agents over MCP").
const ANY_WORD_DOCS: i64 = 2_000;

/// The word lists are first read from the whole index, this many times the pool, and then
/// filtered to the holder (and the filter): far cheaper than joining every match. When fewer
/// than the pool survive and there were more matches, they are read again with the join.
const WIDE: usize = 4;

/// How the matches of a full-text query are ordered.
#[derive(Clone, Copy, PartialEq)]
enum Order {
    /// By bm25 (best first).
    Bm25,
    /// Newest first (no score computed: FTS5 walks its index backwards and stops early).
    Newest,
}

/// The full-text side of a search: one holder's matches, kept by a filter, at most `pool`.
struct Words<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    holder: i64,
    filter: &'a Filter,
    pool: usize,
}

/// A note found by its words and its bm25 (`None` in a list ordered by age).
type WordHit = (i64, Option<f64>);

impl Words<'_> {
    /// The notes that share words with `q`: first those that hold all its usable words (not
    /// commoner than [`COMMON_DOCS`]), best first by bm25; then those that hold any of its
    /// rarest words ([`ANY_WORD_DOCS`]), best first by bm25. If every word is too common, the
    /// newest notes holding them all. With them, the sum of the usable words' idf: the bm25
    /// of a note holding each of them once ([`fusion::words_weight`]).
    fn ranked(&self, q: &str) -> Result<(Vec<WordHit>, f64)> {
        let mut all = words(q);
        // Each word once: a repeated word is no more evidence.
        let mut once = std::collections::HashSet::new();
        all.retain(|w| once.insert(w.to_lowercase()));
        if all.is_empty() {
            return Ok((Vec::new(), 0.0));
        }
        let mut docs = self
            .tx
            .prepare_cached("SELECT doc FROM claim_fts_vocab WHERE term = ?1")?;
        let mut counted = Vec::with_capacity(all.len());
        for w in &all {
            let n: Option<i64> = docs
                .query_row([w.to_lowercase()], |r| r.get(0))
                .optional()?;
            counted.push((n.unwrap_or(0), *w));
        }
        counted.sort();
        let usable: Vec<&str> = counted
            .iter()
            .filter(|(n, _)| *n <= COMMON_DOCS)
            .map(|(_, w)| *w)
            .collect();
        if usable.is_empty() {
            return Ok((self.matching(&quoted(&all, " "), Order::Newest)?, 0.0));
        }
        let rows: i64 = self
            .tx
            .query_row("SELECT coalesce(max(id), 0) FROM claim", [], |r| r.get(0))?;
        let query_idf: f64 = counted
            .iter()
            // A word no note holds is evidence too: a note sharing only "Maya" of "which nut
            // does Maya react to" holds a small share of the query.
            .filter(|(n, _)| *n <= COMMON_DOCS)
            .map(|(n, _)| fusion::idf(*n, rows))
            .sum();
        let mut hits = if usable.len() > 1 {
            self.matching(&quoted(&usable, " "), Order::Bm25)?
        } else {
            Vec::new()
        };
        if hits.len() >= self.pool {
            return Ok((hits, query_idf));
        }
        // Rarest first, while the notes to rank stay within the budget (the rarest always).
        let mut any = Vec::new();
        let mut notes = 0;
        for (n, w) in counted.iter().filter(|(n, _)| *n <= COMMON_DOCS) {
            if !any.is_empty() && notes + n > ANY_WORD_DOCS {
                break;
            }
            notes += n;
            any.push(*w);
        }
        let seen: std::collections::HashSet<i64> = hits.iter().map(|(id, _)| *id).collect();
        for hit in self.matching(&quoted(&any, " OR "), Order::Bm25)? {
            if hits.len() == self.pool {
                break;
            }
            if !seen.contains(&hit.0) {
                hits.push(hit);
            }
        }
        Ok((hits, query_idf))
    }

    /// The holder's matches of the FTS5 query `m` that the filter keeps, at most the pool.
    fn matching(&self, m: &str, order: Order) -> Result<Vec<(i64, Option<f64>)>> {
        let f = self.filter;
        let (from, to) = (f.from.unwrap_or(i64::MIN), f.to.unwrap_or(i64::MAX));
        let wide = self.pool * WIDE;
        let mut st = self.tx.prepare_cached(match order {
            Order::Bm25 => "SELECT rowid, bm25(claim_fts) AS b FROM claim_fts WHERE claim_fts MATCH ?1 ORDER BY b, rowid DESC LIMIT ?2",
            Order::Newest => "SELECT rowid, NULL FROM claim_fts WHERE claim_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
        })?;
        let found: Vec<(i64, Option<f64>)> = st
            .query_map(params![m, wide as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut keeps = self.tx.prepare_cached(
            "SELECT 1 FROM holding h JOIN claim c ON c.id = h.claim_id
             WHERE h.claim_id = ?1 AND h.holder_id = ?2 AND (?3 IS NULL OR h.session = ?3)
               AND (?4 IS NULL OR c.source = ?4 OR (?4 = 'agent' AND c.source GLOB 'agent: *')) AND c.created_at >= ?5 AND c.created_at < ?6",
        )?;
        let mut kept = Vec::with_capacity(self.pool);
        for (id, b) in &found {
            if kept.len() == self.pool {
                break;
            }
            if keeps.exists(params![id, self.holder, f.session, f.source, from, to])? {
                kept.push((*id, *b));
            }
        }
        if kept.len() == self.pool || found.len() < wide {
            return Ok(kept);
        }
        // Most of the best matches are another holder's or filtered out: read the holder's own.
        let mut st = self.tx.prepare_cached(match order {
            Order::Bm25 => {
                "SELECT f.rowid, bm25(claim_fts) AS b FROM claim_fts f
                 JOIN holding h ON h.claim_id = f.rowid JOIN claim c ON c.id = f.rowid
                 WHERE claim_fts MATCH ?1 AND h.holder_id = ?2 AND (?3 IS NULL OR h.session = ?3)
                   AND (?5 IS NULL OR c.source = ?5 OR (?5 = 'agent' AND c.source GLOB 'agent: *')) AND c.created_at >= ?6 AND c.created_at < ?7
                 ORDER BY b, f.rowid DESC LIMIT ?4"
            }
            Order::Newest => {
                "SELECT f.rowid, NULL FROM claim_fts f
                 JOIN holding h ON h.claim_id = f.rowid JOIN claim c ON c.id = f.rowid
                 WHERE claim_fts MATCH ?1 AND h.holder_id = ?2 AND (?3 IS NULL OR h.session = ?3)
                   AND (?5 IS NULL OR c.source = ?5 OR (?5 = 'agent' AND c.source GLOB 'agent: *')) AND c.created_at >= ?6 AND c.created_at < ?7
                 ORDER BY f.rowid DESC LIMIT ?4"
            }
        })?;
        let rows = st.query_map(
            params![
                m,
                self.holder,
                f.session,
                self.pool as i64,
                f.source,
                from,
                to
            ],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_reaches_fts5_only_as_quoted_words() {
        assert_eq!(
            fts_words("blue \"flower* pot").as_deref(),
            Some("\"blue\" OR \"flower\" OR \"pot\"")
        );
        assert_eq!(
            fts_phrase("blue flower-pot").as_deref(),
            Some("\"blue flower pot\"")
        );
        for hostile in [
            "\"",
            "*",
            "NEAR(",
            "OR",
            "-",
            ":",
            "^",
            "\"unbalanced",
            "a:b",
            "(x OR y",
        ] {
            let q = fts_words(hostile);
            assert!(
                q.as_deref()
                    .is_none_or(|q| q.split(" OR ").all(|w| w.starts_with('"')
                        && w.ends_with('"')
                        && w[1..w.len() - 1].chars().all(char::is_alphanumeric))),
                "{hostile:?} -> {q:?}"
            );
        }
        assert_eq!(fts_words("*** --- :::"), None);
        assert_eq!(words(&"word ".repeat(1000)).len(), MAX_QUERY_WORDS);
    }
}
