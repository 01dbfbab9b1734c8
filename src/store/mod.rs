//! The memory store: one SQLite file (WAL) holding claims, their full text (FTS5) and their
//! vectors (sqlite-vec), found again by meaning blended with recency.
//!
//! Opening a store is cheap and never loads a model; the embedder loads on the first
//! [`Store::remember`] or [`Store::recall`].
//!
//! # Ranking
//! [`Store::recall`] takes the `max(4k, 50)` nearest claims by cosine similarity (through the
//! `vec0` index, or an exact scan when `UMWELT_PERF=off`), then orders them by
//!
//! ```text
//! score = cosine_similarity + RECENCY_WEIGHT * 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)
//! ```
//!
//! so that between two equally close memories the newer wins, while meaning still dominates
//! (the recency term is worth at most 0.1).

mod schema;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::embed::{LazyEmbedder, EMBED_DIM, EMBED_MODEL_ID};
use crate::error::{Error, Result};
use crate::perf;

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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Memory {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: MemoryId,
    pub text: String,
    pub scope: String,
    pub session: String,
    /// Unix time in milliseconds.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub created_at: i64,
    /// `typed` or `dictated`.
    pub source: String,
    /// The recording a dictated memory was transcribed from.
    pub audio_path: Option<String>,
}

/// A recalled memory and why it ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
}

/// The store. Share it as `Arc<Store>`; calls are serialised on one connection.
pub struct Store {
    conn: Mutex<Connection>,
    embedder: Arc<LazyEmbedder>,
    path: PathBuf,
}

static REGISTER_VEC: Once = Once::new();

fn register_sqlite_vec() {
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

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn check_text(text: &str) -> Result<&str> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::InvalidInput("there is nothing to remember: the text is empty".into()));
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
        return Err(Error::InvalidInput(format!("k must be between 1 and {MAX_K}, not {k}")));
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
            std::fs::create_dir_all(dir).map_err(Error::io(format!("creating the folder {}", dir.display())))?;
        }
        let mut conn = Connection::open(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        schema::migrate(&mut conn)?;
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('embed_model', ?1)", [EMBED_MODEL_ID])?;
        Ok(Store { conn: Mutex::new(conn), embedder, path })
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
        self.remember_new(&NewMemory { scope, session, text, ..Default::default() })
    }

    /// [`Store::remember`] with every field.
    pub fn remember_new(&self, m: &NewMemory) -> Result<MemoryId> {
        let text = check_text(m.text)?;
        let vector = self.embedder.get()?.embed_one(text)?;
        self.remember_with_vector(&NewMemory { text, ..m.clone() }, &vector)
    }

    /// Write a memory whose embedding is already known (bench corpora, re-embedding).
    pub fn remember_with_vector(&self, m: &NewMemory, vector: &[f32]) -> Result<MemoryId> {
        let text = check_text(m.text)?;
        if vector.len() != EMBED_DIM {
            return Err(Error::InvalidInput(format!("a vector has {EMBED_DIM} dimensions, not {}", vector.len())));
        }
        let scope = if m.scope.trim().is_empty() { DEFAULT_SCOPE } else { m.scope };
        let at = m.created_at.unwrap_or_else(now_ms);
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("INSERT OR IGNORE INTO holder(name, created_at) VALUES (?1, ?2)", params![scope, at])?;
        let holder: i64 = tx.query_row("SELECT id FROM holder WHERE name = ?1", [scope], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO claim(text, created_at, source, audio_path) VALUES (?1, ?2, ?3, ?4)",
            params![text, at, m.source.unwrap_or("typed"), m.audio_path],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO holding(holder_id, claim_id, session, since) VALUES (?1, ?2, ?3, ?4)",
            params![holder, id, m.session, at],
        )?;
        tx.execute("INSERT INTO claim_fts(rowid, text) VALUES (?1, ?2)", params![id, text])?;
        tx.execute(
            "INSERT INTO claim_vec(rowid, holder_id, session, embedding) VALUES (?1, ?2, ?3, ?4)",
            params![id, holder, m.session, f32_bytes(vector)],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// The `k` memories of `scope` (and of `session`, if given) that best answer `query`.
    pub fn recall(&self, query: &str, scope: &str, session: Option<&str>, k: usize) -> Result<Vec<Hit>> {
        check_k(k)?;
        let q = query.trim();
        if q.is_empty() {
            return Err(Error::InvalidInput("the search is empty: type what you are looking for".into()));
        }
        if q.len() > MAX_TEXT_BYTES {
            return Err(Error::InvalidInput(format!("the search is longer than {} KiB", MAX_TEXT_BYTES / 1024)));
        }
        if self.holder_id(scope)?.is_none() {
            return Ok(Vec::new());
        }
        let vector = self.embedder.get()?.embed_one(q)?;
        self.recall_vector(&vector, scope, session, k, now_ms())
    }

    fn holder_id(&self, scope: &str) -> Result<Option<i64>> {
        Ok(self.conn().query_row("SELECT id FROM holder WHERE name = ?1", [scope], |r| r.get(0)).optional()?)
    }

    /// Recall by a ready query vector, ranking recency against `now` (unix ms).
    pub fn recall_vector(&self, vector: &[f32], scope: &str, session: Option<&str>, k: usize, now: i64) -> Result<Vec<Hit>> {
        check_k(k)?;
        if vector.len() != EMBED_DIM {
            return Err(Error::InvalidInput(format!("a query vector has {EMBED_DIM} dimensions, not {}", vector.len())));
        }
        let Some(holder) = self.holder_id(scope)? else { return Ok(Vec::new()) };
        let pool = (k * 4).max(50);
        let conn = self.conn();
        let q = f32_bytes(vector);
        let nearest: Vec<(i64, f32)> = if perf::enabled() {
            // The vec0 index, partitioned by holder; the session is a metadata column it filters on.
            let sql = match session {
                Some(_) => "SELECT rowid, distance FROM claim_vec WHERE embedding MATCH ?1 AND k = ?2 AND holder_id = ?3 AND session = ?4",
                None => "SELECT rowid, distance FROM claim_vec WHERE embedding MATCH ?1 AND k = ?2 AND holder_id = ?3",
            };
            let mut st = conn.prepare_cached(sql)?;
            let row = |r: &rusqlite::Row| Ok((r.get(0)?, r.get(1)?));
            match session {
                Some(s) => st.query_map(params![q, pool as i64, holder, s], row)?.collect::<rusqlite::Result<_>>()?,
                None => st.query_map(params![q, pool as i64, holder], row)?.collect::<rusqlite::Result<_>>()?,
            }
        } else {
            // The plain path: an exact distance for every vector of the holder.
            let mut st = conn.prepare_cached(
                "SELECT rowid, vec_distance_cosine(embedding, ?1) AS d FROM claim_vec
                 WHERE holder_id = ?2 AND (?3 IS NULL OR session = ?3) ORDER BY d, rowid LIMIT ?4",
            )?;
            let rows = st.query_map(params![q, holder, session, pool as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut hits = Vec::with_capacity(nearest.len());
        let mut get = conn.prepare_cached(MEMORY_BY_ID)?;
        for (id, distance) in nearest {
            let memory = get.query_row(params![id, holder], memory_row)?;
            let similarity = 1.0 - distance;
            let age_days = ((now - memory.created_at).max(0) as f32) / 86_400_000.0;
            let recency = RECENCY_WEIGHT * 0.5f32.powf(age_days / RECENCY_HALF_LIFE_DAYS);
            hits.push(Hit { memory, similarity, recency, score: similarity + recency });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.memory.id.cmp(&a.memory.id)));
        hits.truncate(k);
        Ok(hits)
    }

    /// Memories of `scope`, newest first, older than `before` (unix ms) when given.
    pub fn list(&self, scope: &str, limit: usize, before: Option<i64>) -> Result<Vec<Memory>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
             FROM holder ho JOIN holding h ON h.holder_id = ho.id JOIN claim c ON c.id = h.claim_id
             WHERE ho.name = ?1 AND h.since < ?2 ORDER BY h.since DESC, c.id DESC LIMIT ?3",
        )?;
        let rows = st.query_map(params![scope, before.unwrap_or(i64::MAX), limit.min(100_000) as i64], memory_row)?;
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
        st.query_row([id], memory_row).optional()?.ok_or_else(|| Error::NotFound(format!("memory {id}")))
    }

    /// Forget one memory: the claim, its holdings, its full text and its vector.
    pub fn delete(&self, id: MemoryId) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let text: Option<String> = tx.query_row("SELECT text FROM claim WHERE id = ?1", [id], |r| r.get(0)).optional()?;
        let Some(text) = text else { return Err(Error::NotFound(format!("memory {id}"))) };
        tx.execute("INSERT INTO claim_fts(claim_fts, rowid, text) VALUES ('delete', ?1, ?2)", params![id, text])?;
        tx.execute("DELETE FROM claim_vec WHERE rowid = ?1", [id])?;
        tx.execute("DELETE FROM claim WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(())
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

    /// `EXPLAIN QUERY PLAN` of the nearest-neighbour query recall would run, for tests that
    /// must prove the index is reached (the first seed's dead fast path).
    pub fn recall_plan(&self, session: Option<&str>) -> Result<String> {
        let conn = self.conn();
        let q = f32_bytes(&vec![0.0; EMBED_DIM]);
        let sql = match session {
            Some(_) => "EXPLAIN QUERY PLAN SELECT rowid, distance FROM claim_vec WHERE embedding MATCH ?1 AND k = 10 AND holder_id = 1 AND session = ?2",
            None => "EXPLAIN QUERY PLAN SELECT rowid, distance FROM claim_vec WHERE embedding MATCH ?1 AND k = 10 AND holder_id = 1",
        };
        let mut st = conn.prepare(sql)?;
        let detail = |r: &rusqlite::Row| r.get::<_, String>(3);
        let rows = match session {
            Some(s) => st.query_map(params![q, s], detail)?.collect::<rusqlite::Result<Vec<_>>>()?,
            None => st.query_map(params![q], detail)?.collect::<rusqlite::Result<Vec<_>>>()?,
        };
        Ok(rows.join("\n"))
    }
}

const MEMORY_BY_ID: &str = "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
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
