//! What a memory is, and the one query that reads memories back: the column list and its row
//! mapping live here once, and every query that returns a [`Memory`] goes through
//! `select_memory!`.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::Store;
use crate::error::{Error, Result};

/// Longest text a memory may hold, in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// The text trimmed, if it is neither empty nor longer than [`MAX_TEXT_BYTES`].
pub(crate) fn check_text(text: &str) -> Result<&str> {
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
    /// Its near-copies among the candidates, best first: shown as "and N similar notes"
    /// rather than each taking a place ([`super::diversity`]).
    #[serde(default)]
    pub similar: Vec<Memory>,
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
    /// The model that made the vector; defaults to [`crate::embed::EMBED_MODEL_ID`].
    pub embed_model: Option<&'a str>,
    /// Earlier texts, oldest first (an imported memory that had been edited).
    pub versions: &'a [super::Version],
    /// The unsaved dictation this memory saves: its draft is settled in the same transaction,
    /// and saving it again gives the same memory.
    pub unsaved: Option<&'a str>,
}

/// `SELECT <a memory's columns> FROM claim c, its holdings h and their holders ho`, followed by
/// the given `WHERE …` (a literal): the rows `memory_row` reads.
macro_rules! select_memory {
    ($rest:literal) => {
        concat!(
            "SELECT c.id, c.text, ho.name, h.session, c.created_at, c.source, c.audio_path
             FROM claim c JOIN holding h ON h.claim_id = c.id JOIN holder ho ON ho.id = h.holder_id
             ",
            $rest
        )
    };
}
pub(super) use select_memory;

/// A row of `select_memory!` as a [`Memory`].
pub(super) fn memory_row(r: &rusqlite::Row) -> rusqlite::Result<Memory> {
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

impl Store {
    /// Memories of `scope`, newest first, older than `before` (unix ms) when given.
    pub fn list(&self, scope: &str, limit: usize, before: Option<i64>) -> Result<Vec<Memory>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(select_memory!(
            "WHERE ho.name = ?1 AND h.since < ?2 ORDER BY h.since DESC, c.id DESC LIMIT ?3"
        ))?;
        let rows = st.query_map(
            params![scope, before.unwrap_or(i64::MAX), limit.min(100_000) as i64],
            memory_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every memory a holder authored, of every holder, oldest first (what an export holds).
    pub fn all_memories(&self) -> Result<Vec<Memory>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(select_memory!(
            "WHERE h.provenance = 'authored' ORDER BY c.created_at, c.id"
        ))?;
        let rows = st.query_map([], memory_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One memory by id.
    pub fn get(&self, id: MemoryId) -> Result<Memory> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(select_memory!(
            "WHERE c.id = ?1 ORDER BY h.provenance = 'authored' DESC LIMIT 1"
        ))?;
        st.query_row([id], memory_row)
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("memory {id}")))
    }

    /// The memory whose recording is `audio_path`, if one is (a recording becomes at most one
    /// memory).
    pub fn memory_with_audio(&self, audio_path: &str) -> Result<Option<MemoryId>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached("SELECT id FROM claim WHERE audio_path = ?1 LIMIT 1")?;
        Ok(st.query_row([audio_path], |r| r.get(0)).optional()?)
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
