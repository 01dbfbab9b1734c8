//! Forgetting: one memory ([`Store::delete`]) or a whole scope ([`Store::forget`]), each in one
//! transaction, and out of the loaded vector indexes right after.

use rusqlite::{params, OptionalExtension};

use super::{write_tx, MemoryId, Store};
use crate::error::{Error, Result};

impl Store {
    /// Forget one memory: the claim, its holdings, its full text, its vector and its recording.
    pub fn delete(&self, id: MemoryId) -> Result<()> {
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let row: Option<(String, Option<String>)> = tx
            .query_row(
                "SELECT text, audio_path FROM claim WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((text, audio)) = row else {
            return Err(Error::NotFound(format!("memory {id}")));
        };
        tx.execute(
            "INSERT INTO claim_fts(claim_fts, rowid, text) VALUES ('delete', ?1, ?2)",
            params![id, text],
        )?;
        tx.execute("DELETE FROM claim WHERE id = ?1", [id])?; // cascades to holdings and the vector
        tx.commit()?;
        drop(conn); // lock order: indexes before conn, never conn then indexes
        self.remove_recordings(audio);
        let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        let failed: Vec<(i64, std::io::Error)> = indexes
            .iter_mut()
            .filter_map(|(&holder, idx)| idx.remove(id).err().map(|e| (holder, e)))
            .collect();
        for (holder, e) in failed {
            super::index::drop_failed(&mut indexes, holder, e);
        }
        Ok(())
    }

    /// Forget a whole scope in one transaction: its memories (with their full text and vectors),
    /// its history and its turn log. Claims another holder also holds stay for that holder.
    /// Returns how many memories went.
    pub fn forget(&self, scope: &str) -> Result<usize> {
        self.forget_where(scope, None)
    }

    /// Forget one session of a scope in one transaction: its memories, its history and its turn
    /// log. Claims another holder (or another session) also holds stay there. Returns how many
    /// memories went.
    pub fn forget_session(&self, scope: &str, session: &str) -> Result<usize> {
        self.forget_where(scope, Some(session))
    }

    /// The memories `scope` holds (in `session`, when one is named): what forgetting it would
    /// take from the window, for a confirmation to count and an Undo to hide.
    pub fn ids_held(&self, scope: &str, session: Option<&str>) -> Result<Vec<MemoryId>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT h.claim_id FROM holding h JOIN holder ho ON ho.id = h.holder_id
             WHERE ho.name = ?1 AND (?2 IS NULL OR h.session = ?2) ORDER BY h.claim_id",
        )?;
        let ids = st.query_map(params![scope, session], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    fn forget_where(&self, scope: &str, session: Option<&str>) -> Result<usize> {
        self.flush_journal()?;
        let Some(holder) = self.holder_id(scope)? else {
            return Ok(0);
        };
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        // Claims held only here (this holder, and this session when one is named).
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS doomed(id INTEGER PRIMARY KEY); DELETE FROM doomed;",
        )?;
        tx.execute(
            "INSERT INTO doomed(id) SELECT h.claim_id FROM holding h WHERE h.holder_id = ?1
             AND (?2 IS NULL OR h.session = ?2)
             AND NOT EXISTS (SELECT 1 FROM holding o WHERE o.claim_id = h.claim_id
                             AND (o.holder_id <> ?1 OR (?2 IS NOT NULL AND o.session <> ?2)))",
            params![holder, session],
        )?;
        tx.execute("INSERT INTO claim_fts(claim_fts, rowid, text) SELECT 'delete', c.id, c.text FROM claim c JOIN doomed d ON d.id = c.id", [])?;
        let recordings = {
            let mut st = tx.prepare(
                "SELECT c.audio_path FROM claim c JOIN doomed d ON d.id = c.id WHERE c.audio_path IS NOT NULL",
            )?;
            let paths = st.query_map([], |r| r.get::<_, String>(0))?;
            paths.collect::<rusqlite::Result<Vec<_>>>()?
        };
        let doomed: Vec<i64> = {
            let mut st = tx.prepare("SELECT id FROM doomed")?;
            let ids = st.query_map([], |r| r.get(0))?;
            ids.collect::<rusqlite::Result<_>>()?
        };
        let n = tx.execute("DELETE FROM claim WHERE id IN (SELECT id FROM doomed)", [])?;
        match session {
            // cascades to holdings, messages, turns
            None => tx.execute("DELETE FROM holder WHERE id = ?1", [holder])?,
            Some(s) => {
                tx.execute(
                    "DELETE FROM holding WHERE holder_id = ?1 AND session = ?2",
                    params![holder, s],
                )?;
                tx.execute(
                    "DELETE FROM message WHERE holder_id = ?1 AND session = ?2",
                    params![holder, s],
                )?;
                tx.execute(
                    "DELETE FROM turn WHERE holder_id = ?1 AND session = ?2",
                    params![holder, s],
                )?
            }
        };
        tx.execute("DELETE FROM doomed", [])?;
        tx.commit()?;
        drop(conn);
        self.remove_recordings(recordings);
        let mut indexes = self.indexes.lock().unwrap_or_else(|p| p.into_inner());
        match session {
            None => {
                indexes.remove(&holder);
            }
            Some(_) => {
                if let Some(idx) = indexes.get_mut(&holder) {
                    if let Err(e) = doomed.into_iter().try_for_each(|id| idx.remove(id)) {
                        super::index::drop_failed(&mut indexes, holder, e);
                    }
                }
            }
        }
        Ok(n)
    }
}
