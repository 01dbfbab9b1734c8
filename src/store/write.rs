//! Remembering: a text is checked, embedded, and written with its holding, its full text and its
//! vector in one transaction; a holder's index, if loaded, takes the new vector at once.

use rusqlite::{params, OptionalExtension};

use super::memory::check_text;
use super::{f32_bytes, write_tx, MemoryId, NewMemory, Store, DEFAULT_SCOPE};
use crate::clock::now_ms;
use crate::embed::{EMBED_DIM, EMBED_MODEL_ID};
use crate::error::{Error, Result};

impl Store {
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
            if let Some(audio) = m.audio_path.filter(|a| !self.is_recording_path(a)) {
                return Err(Error::InvalidInput(format!(
                    "{audio} is not in Umwelt's recordings folder ({}): a memory's recording \
                     must be one of Umwelt's own",
                    self.recordings_dir().display()
                )));
            }
            if v.len() != EMBED_DIM {
                return Err(Error::InvalidInput(format!(
                    "a vector has {EMBED_DIM} dimensions, not {}",
                    v.len()
                )));
            }
        }
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        // Every row's id, in order; and the rows written now (an index has to take them).
        let mut ids = Vec::with_capacity(rows.len());
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
            let mut audio_st = tx.prepare_cached("SELECT id FROM claim WHERE audio_path = ?1")?;
            let mut version_st = tx.prepare_cached(
                "INSERT INTO claim_version(claim_id, text, edited_at) VALUES (?1, ?2, ?3)",
            )?;
            for (m, vector) in rows {
                let text = check_text(m.text)?;
                if let Some(name) = m.unsaved {
                    if let Some(id) = super::holdings::unsaved::settle(&tx, name, None)? {
                        ids.push(id);
                        continue;
                    }
                }
                // A recording becomes one memory: saving its draft again (after a crash between
                // the commit and the draft's removal, or twice at once) gives the same memory.
                // Anything else naming a recording that is already a memory's is refused rather
                // than dropped unseen (an import leaves such links out first and says so).
                if let Some(audio) = m.audio_path {
                    if let Some(id) = audio_st
                        .query_row([audio], |r| r.get::<_, i64>(0))
                        .optional()?
                    {
                        if m.unsaved.is_some() {
                            ids.push(id);
                            continue;
                        }
                        return Err(Error::InvalidInput(format!(
                            "the recording {audio} is already memory {id}'s: a recording \
                             belongs to one memory"
                        )));
                    }
                }
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
                for v in m.versions {
                    version_st.execute(params![id, v.text, v.edited_at])?;
                }
                fts_st.execute(params![id, text])?;
                vec_st.execute(params![
                    id,
                    holder,
                    m.session,
                    m.embed_model.unwrap_or(EMBED_MODEL_ID),
                    f32_bytes(vector)
                ])?;
                if let Some(name) = m.unsaved {
                    super::holdings::unsaved::settle(&tx, name, Some(id))?;
                }
                ids.push(id);
                written.push((m, *vector, holder, id, at));
            }
        }
        tx.commit()?;
        drop(conn);
        let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        for (m, v, holder, id, at) in written {
            if let Some(idx) = indexes.get_mut(&holder) {
                if let Err(e) = idx.upsert(id, m.session, at, v) {
                    super::index::drop_failed(&mut indexes, holder, e);
                }
            }
        }
        Ok(ids)
    }
}
