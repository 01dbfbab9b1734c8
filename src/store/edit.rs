//! Editing a memory: the new text is embedded and indexed (full text and vector) in one
//! transaction, and the text it replaces is kept as a version, so nothing is silently
//! overwritten and any version can be restored (a restore is itself an edit, and can be undone).

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::memory::check_text;
use super::{f32_bytes, write_tx, Memory, MemoryId, Store};
use crate::clock::now_ms;
use crate::embed::EMBED_MODEL_ID;
use crate::error::{Error, Result};

/// An earlier text of a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Version {
    pub id: i64,
    /// The text as it was.
    pub text: String,
    /// When an edit replaced it (unix ms).
    pub edited_at: i64,
}

impl Store {
    /// Replace memory `id`'s text with `text`, keeping the old text as a version. The same text
    /// again changes nothing.
    pub fn edit(&self, id: MemoryId, text: &str) -> Result<Memory> {
        let text = check_text(text)?;
        let current = self.get(id)?;
        if current.text == text {
            return Ok(current);
        }
        let vector = self.embedder.get()?.embed_one(text)?;
        self.edit_with_vector(id, text, &vector, now_ms())
    }

    /// [`Store::edit`] with the new text's vector already made, at `at` (unix ms).
    pub fn edit_with_vector(
        &self,
        id: MemoryId,
        text: &str,
        vector: &[f32],
        at: i64,
    ) -> Result<Memory> {
        let text = check_text(text)?;
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let old: Option<String> = tx
            .query_row("SELECT text FROM claim WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        let Some(old) = old else {
            return Err(Error::NotFound(format!("memory {id}")));
        };
        tx.execute(
            "INSERT INTO claim_version(claim_id, text, edited_at) VALUES (?1, ?2, ?3)",
            params![id, old, at],
        )?;
        tx.execute(
            "UPDATE claim SET text = ?2 WHERE id = ?1",
            params![id, text],
        )?;
        tx.execute(
            "INSERT INTO claim_fts(claim_fts, rowid, text) VALUES ('delete', ?1, ?2)",
            params![id, old],
        )?;
        tx.execute(
            "INSERT INTO claim_fts(rowid, text) VALUES (?1, ?2)",
            params![id, text],
        )?;
        let placed: Option<(i64, String)> = tx
            .query_row(
                "UPDATE claim_vector SET embedding = ?2, model = ?3 WHERE claim_id = ?1 RETURNING holder_id, session",
                params![id, f32_bytes(vector), EMBED_MODEL_ID],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let created_at: i64 =
            tx.query_row("SELECT created_at FROM claim WHERE id = ?1", [id], |r| {
                r.get(0)
            })?;
        tx.commit()?;
        drop(conn); // lock order: indexes before conn
        if let Some((holder, session)) = placed {
            let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(idx) = indexes.get_mut(&holder) {
                if let Err(e) = idx.upsert(id, &session, created_at, vector) {
                    super::index::drop_failed(&mut indexes, holder, e);
                }
            }
        }
        self.get(id)
    }

    /// The earlier texts of memory `id`, oldest first.
    pub fn versions(&self, id: MemoryId) -> Result<Vec<Version>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT id, text, edited_at FROM claim_version WHERE claim_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([id], |r| {
            Ok(Version {
                id: r.get(0)?,
                text: r.get(1)?,
                edited_at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Make version `version` memory `id`'s text again (the text it replaces becomes a version).
    pub fn restore(&self, id: MemoryId, version: i64) -> Result<Memory> {
        let text: Option<String> = self
            .conn()
            .query_row(
                "SELECT text FROM claim_version WHERE id = ?1 AND claim_id = ?2",
                params![version, id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(text) = text else {
            return Err(Error::NotFound(format!("version {version} of memory {id}")));
        };
        self.edit(id, &text)
    }
}
