//! The memory store: one SQLite file (WAL) holding claims, their full text (FTS5) and their
//! vectors, found again by meaning blended with recency.
//!
//! Opening a store is cheap and never loads a model; the embedder loads on the first
//! [`Store::remember`] or [`Store::recall`].
//!
//! # Ranking
//! [`Store::recall`] takes the `max(4k, 50)` nearest claims by cosine similarity (through the
//! memory-resident index of `index.rs`, or an exact scan in SQL with sqlite-vec's
//! `vec_distance_cosine` when `UMWELT_PERF=off`), then orders them by
//!
//! ```text
//! score = cosine_similarity + RECENCY_WEIGHT * 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)
//! ```
//!
//! so that between two equally close memories the newer wins, while meaning still dominates
//! (the recency term is worth at most 0.1).

mod index;
pub mod journal;
mod schema;

use crate::clock::now_ms;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::embed::{LazyEmbedder, EMBED_DIM, EMBED_MODEL_ID};
use crate::error::{Error, Result};
use crate::optimisations;
use index::VecIndex;
use journal::{Journal, Message, Turn};

pub use schema::CURRENT_VERSION as SCHEMA_VERSION;

/// Weight of the recency term in the recall score.
pub const RECENCY_WEIGHT: f32 = 0.1;
/// Age at which the recency term has halved.
pub const RECENCY_HALF_LIFE_DAYS: f32 = 30.0;
/// Longest text a memory may hold, in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Most hits one recall may ask for.
pub const MAX_K: usize = 1000;
/// The scope a memory goes to when none is named: the user's own notebook.
pub const DEFAULT_SCOPE: &str = "me";

/// Id of a memory (a claim).
pub type MemoryId = i64;

/// One remembered text, as the user sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Memory {
    pub id: MemoryId,
    pub text: String,
    pub scope: String,
    pub session: String,
    /// Unix time in milliseconds.
    pub created_at: i64,
    /// `typed` or `dictated`.
    pub source: String,
    /// The recording a dictated memory was transcribed from.
    pub audio_path: Option<String>,
}

/// A recalled memory and why it ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Hit {
    pub memory: Memory,
    /// Cosine similarity to the query, -1..1.
    pub similarity: f32,
    /// The recency term added to it.
    pub recency: f32,
    /// `similarity + recency`: what the hits are ordered by.
    pub score: f32,
}

/// What to store with a memory besides its text.
#[derive(Debug, Clone, Default)]
pub struct NewMemory<'a> {
    pub scope: &'a str,
    pub session: &'a str,
    pub text: &'a str,
    /// Defaults to now.
    pub created_at: Option<i64>,
    pub source: Option<&'a str>,
    pub audio_path: Option<&'a str>,
    /// The model that made the vector; defaults to [`EMBED_MODEL_ID`].
    pub embed_model: Option<&'a str>,
}

/// How recalls were served, for tests and the harness to prove which path ran.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecallStats {
    /// Served by the vector index (the memory-resident one).
    pub indexed: u64,
    /// Served by an exact scan in SQL (`UMWELT_PERF=off`).
    pub scanned: u64,
}

/// Progress of re-embedding, for a UI to show.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ReembedProgress {
    pub done: usize,
    pub total: usize,
}

/// The store. Share it as `Arc<Store>`; calls are serialised on one connection.
pub struct Store {
    conn: Mutex<Connection>,
    embedder: Arc<LazyEmbedder>,
    path: PathBuf,
    /// Per holder id: its vectors in memory, loaded on that holder's first recall.
    indexes: Mutex<HashMap<i64, VecIndex>>,
    journal: Mutex<Option<Arc<Journal>>>,
    indexed: AtomicU64,
    scanned: AtomicU64,
}

static REGISTER_VEC: Once = Once::new();

pub(crate) fn register_sqlite_vec() {
    REGISTER_VEC.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        // SAFETY: sqlite3_vec_init has the signature SQLite expects of an extension entry point.
        unsafe {
            let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init));
        }
    });
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn check_text(text: &str) -> Result<&str> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::InvalidInput(
            "there is nothing to remember: the text is empty".into(),
        ));
    }
    if t.len() > MAX_TEXT_BYTES {
        return Err(Error::InvalidInput(format!(
            "the text is {} KiB; a memory holds at most {} KiB — split it into several notes",
            t.len() / 1024,
            MAX_TEXT_BYTES / 1024
        )));
    }
    Ok(t)
}

fn check_k(k: usize) -> Result<usize> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidInput(format!(
            "k must be between 1 and {MAX_K}, not {k}"
        )));
    }
    Ok(k)
}

impl Store {
    /// Open (or create) the store at `path`, with the embedder that the model resolver finds.
    /// Loads no model.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path, Arc::new(LazyEmbedder::new()))
    }

    /// Open with a given (possibly shared, possibly already loaded) embedder.
    pub fn open_with(path: impl AsRef<Path>, embedder: Arc<LazyEmbedder>) -> Result<Store> {
        register_sqlite_vec();
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(Error::io(format!("creating the folder {}", dir.display())))?;
        }
        let mut conn = Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            embedder,
            path,
            indexes: Mutex::new(HashMap::new()),
            journal: Mutex::new(None),
            indexed: AtomicU64::new(0),
            scanned: AtomicU64::new(0),
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The embedder this store uses (loaded lazily).
    pub fn embedder(&self) -> &Arc<LazyEmbedder> {
        &self.embedder
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remember `text` in `scope` / `session`: embed it, then write it, its full text and its
    /// vector in one transaction.
    pub fn remember(&self, scope: &str, session: &str, text: &str) -> Result<MemoryId> {
        self.remember_new(&NewMemory {
            scope,
            session,
            text,
            ..Default::default()
        })
    }

    /// [`Store::remember`] with every field.
    pub fn remember_new(&self, m: &NewMemory) -> Result<MemoryId> {
        let text = check_text(m.text)?;
        let vector = self.embedder.get()?.embed_one(text)?;
        self.remember_with_vector(&NewMemory { text, ..m.clone() }, &vector)
    }

    /// Write a memory whose embedding is already known (bench corpora, re-embedding).
    pub fn remember_with_vector(&self, m: &NewMemory, vector: &[f32]) -> Result<MemoryId> {
        Ok(self.remember_batch(&[(m.clone(), vector)])?[0])
    }

    /// Write many memories with known vectors in one transaction: all or none.
    pub fn remember_batch(&self, rows: &[(NewMemory, &[f32])]) -> Result<Vec<MemoryId>> {
        for (m, v) in rows {
            check_text(m.text)?;
            if v.len() != EMBED_DIM {
                return Err(Error::InvalidInput(format!(
                    "a vector has {EMBED_DIM} dimensions, not {}",
                    v.len()
                )));
            }
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut written = Vec::with_capacity(rows.len());
        {
            let mut holder_st = tx.prepare_cached(
                "INSERT INTO holder(name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id",
            )?;
            let mut claim_st = tx.prepare_cached(
                "INSERT INTO claim(text, created_at, source, audio_path) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut holding_st = tx.prepare_cached(
                "INSERT INTO holding(holder_id, claim_id, session, since) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut fts_st =
                tx.prepare_cached("INSERT INTO claim_fts(rowid, text) VALUES (?1, ?2)")?;
            let mut vec_st =
                tx.prepare_cached("INSERT INTO claim_vector(claim_id, holder_id, session, model, embedding) VALUES (?1, ?2, ?3, ?4, ?5)")?;
            for (m, vector) in rows {
                let text = check_text(m.text)?;
                let scope = if m.scope.trim().is_empty() {
                    DEFAULT_SCOPE
                } else {
                    m.scope
                };
                let at = m.created_at.unwrap_or_else(now_ms);
                let holder: i64 = holder_st.query_row(params![scope, at], |r| r.get(0))?;
                claim_st.execute(params![text, at, m.source.unwrap_or("typed"), m.audio_path])?;
                let id = tx.last_insert_rowid();
                holding_st.execute(params![holder, id, m.session, at])?;
                fts_st.execute(params![id, text])?;
                vec_st.execute(params![
                    id,
                    holder,
                    m.session,
                    m.embed_model.unwrap_or(EMBED_MODEL_ID),
                    f32_bytes(vector)
                ])?;
                written.push((holder, id, at));
            }
        }
        tx.commit()?;
        drop(conn);
        let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        for ((m, v), (holder, id, at)) in rows.iter().zip(&written) {
            if let Some(idx) = indexes.get_mut(holder) {
                idx.upsert(*id, m.session, *at, v);
            }
        }
        Ok(written.into_iter().map(|w| w.1).collect())
    }

    /// Move the write-ahead log into the main file (so the file can be copied alone).
    pub fn checkpoint(&self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }

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
        if self.holder_id(scope)?.is_none() {
            return Ok(Vec::new());
        }
        let vector = self.embedder.get()?.embed_one(q)?;
        self.recall_vector(&vector, scope, session, k, now_ms())
    }

    fn holder_id(&self, scope: &str) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row("SELECT id FROM holder WHERE name = ?1", [scope], |r| {
                r.get(0)
            })
            .optional()?)
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
        let mut ranked: Vec<(i64, f32, f32)> = nearest
            .into_iter()
            .map(|(id, similarity, created_at)| {
                let age_days = ((now - created_at).max(0) as f32) / 86_400_000.0;
                (
                    id,
                    similarity,
                    RECENCY_WEIGHT * 0.5f32.powf(age_days / RECENCY_HALF_LIFE_DAYS),
                )
            })
            .collect();
        ranked.sort_by(|a, b| (b.1 + b.2).total_cmp(&(a.1 + a.2)).then(b.0.cmp(&a.0)));
        ranked.truncate(k);
        let conn = self.conn();
        let mut get = conn.prepare_cached(MEMORY_BY_ID)?;
        ranked
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

    /// Memories of `scope`, newest first, older than `before` (unix ms) when given.
    pub fn list(&self, scope: &str, limit: usize, before: Option<i64>) -> Result<Vec<Memory>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
             FROM holder ho JOIN holding h ON h.holder_id = ho.id JOIN claim c ON c.id = h.claim_id
             WHERE ho.name = ?1 AND h.since < ?2 ORDER BY h.since DESC, c.id DESC LIMIT ?3",
        )?;
        let rows = st.query_map(
            params![scope, before.unwrap_or(i64::MAX), limit.min(100_000) as i64],
            memory_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One memory by id.
    pub fn get(&self, id: MemoryId) -> Result<Memory> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
             FROM claim c JOIN holding h ON h.claim_id = c.id JOIN holder ho ON ho.id = h.holder_id
             WHERE c.id = ?1 ORDER BY h.provenance = 'authored' DESC LIMIT 1",
        )?;
        st.query_row([id], memory_row)
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("memory {id}")))
    }

    /// Forget one memory: the claim, its holdings, its full text and its vector.
    pub fn delete(&self, id: MemoryId) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let text: Option<String> = tx
            .query_row("SELECT text FROM claim WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        let Some(text) = text else {
            return Err(Error::NotFound(format!("memory {id}")));
        };
        tx.execute(
            "INSERT INTO claim_fts(claim_fts, rowid, text) VALUES ('delete', ?1, ?2)",
            params![id, text],
        )?;
        tx.execute("DELETE FROM claim WHERE id = ?1", [id])?; // cascades to holdings and the vector
        tx.commit()?;
        drop(conn); // lock order: indexes before conn, never conn then indexes
        for idx in self
            .indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values_mut()
        {
            idx.remove(id);
        }
        Ok(())
    }

    /// Forget a whole scope in one transaction: its memories (with their full text and vectors),
    /// its history and its turn log. Claims another holder also holds stay for that holder.
    /// Returns how many memories went.
    pub fn forget(&self, scope: &str) -> Result<usize> {
        self.flush_journal()?;
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(0);
        };
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        // Claims only this holder holds.
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS doomed(id INTEGER PRIMARY KEY); DELETE FROM doomed;",
        )?;
        tx.execute(
            "INSERT INTO doomed(id) SELECT h.claim_id FROM holding h WHERE h.holder_id = ?1
             AND NOT EXISTS (SELECT 1 FROM holding o WHERE o.claim_id = h.claim_id AND o.holder_id <> ?1)",
            [holder],
        )?;
        tx.execute("INSERT INTO claim_fts(claim_fts, rowid, text) SELECT 'delete', c.id, c.text FROM claim c JOIN doomed d ON d.id = c.id", [])?;
        let n = tx.execute("DELETE FROM claim WHERE id IN (SELECT id FROM doomed)", [])?;
        tx.execute("DELETE FROM holder WHERE id = ?1", [holder])?; // cascades to holdings, messages, turns
        tx.execute("DELETE FROM doomed", [])?;
        tx.commit()?;
        drop(conn);
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&holder);
        Ok(n)
    }

    fn journal(&self) -> Result<Arc<Journal>> {
        let mut slot = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = slot.as_ref() {
            return Ok(j.clone());
        }
        let j = Arc::new(Journal::open(&self.path)?);
        *slot = Some(j.clone());
        Ok(j)
    }

    fn flush_journal(&self) -> Result<()> {
        let j = self
            .journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match j {
            Some(j) => j.flush(),
            None => Ok(()),
        }
    }

    /// Append a message to a session's history (acknowledged at once, written within
    /// [`journal::DEBOUNCE`]; never lost on a clean shutdown).
    pub fn append_message(&self, scope: &str, session: &str, role: &str, text: &str) -> Result<()> {
        self.journal()?.append(
            scope,
            session,
            Message {
                role: role.into(),
                text: text.into(),
                at: now_ms(),
            },
        )
    }

    /// The last `limit` messages of a session, oldest first.
    pub fn history(&self, scope: &str, session: &str, limit: usize) -> Result<Vec<Message>> {
        self.flush_journal()?;
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT role, text, at FROM (SELECT m.id, m.role, m.text, m.at FROM message m JOIN holder h ON h.id = m.holder_id
             WHERE h.name = ?1 AND m.session = ?2 ORDER BY m.id DESC LIMIT ?3) ORDER BY id",
        )?;
        let rows = st.query_map(params![scope, session, limit as i64], |r| {
            Ok(Message {
                role: r.get(0)?,
                text: r.get(1)?,
                at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Write one turn down.
    pub fn log_turn(&self, scope: &str, session: &str, turn: Turn) -> Result<()> {
        self.journal()?.log_turn(scope, session, turn)
    }

    /// The last `limit` turns of a session, oldest first.
    pub fn turns(&self, scope: &str, session: &str, limit: usize) -> Result<Vec<Turn>> {
        self.flush_journal()?;
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT user_text, reply_text, stages, at FROM (SELECT t.* FROM turn t JOIN holder h ON h.id = t.holder_id
             WHERE h.name = ?1 AND t.session = ?2 ORDER BY t.id DESC LIMIT ?3) ORDER BY id",
        )?;
        let rows = st.query_map(params![scope, session, limit as i64], |r| {
            let stages: String = r.get(2)?;
            Ok(Turn {
                user_text: r.get(0)?,
                reply_text: r.get(1)?,
                stages: serde_json::from_str(&stages).unwrap_or_default(),
                at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Write any queued history now (also done on drop).
    pub fn flush(&self) -> Result<()> {
        self.flush_journal()
    }

    /// How many memories have a vector made by another model than `model`.
    pub fn stale_embeddings(&self, model: &str) -> Result<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM claim_vector WHERE model <> ?1",
            [model],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// Re-embed every memory whose vector was made by another model than `model`, in batches of
    /// `batch`, each batch its own transaction, so an interrupted run resumes where it stopped.
    /// `progress` is called after every batch; `cancel` stops between batches.
    pub fn reembed_all(
        &self,
        model: &str,
        batch: usize,
        embed: &dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>>,
        progress: &mut dyn FnMut(ReembedProgress),
        cancel: &AtomicBool,
    ) -> Result<ReembedProgress> {
        let total = self.stale_embeddings(model)?;
        let mut p = ReembedProgress { done: 0, total };
        progress(p);
        while !cancel.load(Ordering::Relaxed) {
            let rows: Vec<(i64, String)> = {
                let conn = self.conn();
                let mut st = conn.prepare_cached(
                    "SELECT v.claim_id, c.text FROM claim_vector v JOIN claim c ON c.id = v.claim_id WHERE v.model <> ?1 ORDER BY v.claim_id LIMIT ?2",
                )?;
                let rows = st.query_map(params![model, batch.max(1) as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            if rows.is_empty() {
                break;
            }
            let texts: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
            let vectors = embed(&texts)?;
            if vectors.len() != rows.len() || vectors.iter().any(|v| v.len() != EMBED_DIM) {
                return Err(Error::InvalidInput(
                    "the embedder returned the wrong number or width of vectors".into(),
                ));
            }
            {
                let mut conn = self.conn();
                let tx = conn.transaction()?;
                let mut holders = Vec::with_capacity(rows.len());
                {
                    let mut up = tx.prepare_cached("UPDATE claim_vector SET embedding = ?2, model = ?3 WHERE claim_id = ?1 RETURNING holder_id")?;
                    for ((id, _), v) in rows.iter().zip(&vectors) {
                        holders.push(
                            up.query_row(params![id, f32_bytes(v), model], |r| r.get::<_, i64>(0))?,
                        );
                    }
                }
                tx.commit()?;
                drop(conn);
                // Loaded indexes take the new vectors in place.
                let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
                for (((id, _), v), holder) in rows.iter().zip(&vectors).zip(&holders) {
                    if let Some(idx) = indexes.get_mut(holder) {
                        idx.update_vector(*id, v);
                    }
                }
            }
            p.done += rows.len();
            progress(p);
        }
        Ok(p)
    }

    /// Number of memories held in `scope`.
    pub fn count(&self, scope: &str) -> Result<usize> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM holding h JOIN holder ho ON ho.id = h.holder_id WHERE ho.name = ?1",
            [scope],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }
}

const MEMORY_BY_ID: &str =
    "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
     FROM claim c JOIN holding h ON h.claim_id = c.id JOIN holder ho ON ho.id = h.holder_id
     WHERE c.id = ?1 AND h.holder_id = ?2";

fn memory_row(r: &rusqlite::Row) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: r.get(0)?,
        text: r.get(1)?,
        scope: r.get(2)?,
        session: r.get(3)?,
        created_at: r.get(4)?,
        source: r.get(5)?,
        audio_path: r.get(6)?,
    })
}
