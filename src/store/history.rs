//! A session's history and its turn log, as the [`Store`] offers them: appends go through the
//! debounced writer of `journal.rs` (opened on first use), reads write whatever it holds first.

use std::sync::Arc;

use rusqlite::params;

use super::journal::{Journal, Message, Turn};
use super::Store;
use crate::clock::now_ms;
use crate::error::Result;

impl Store {
    fn journal(&self) -> Result<Arc<Journal>> {
        let mut slot = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = slot.as_ref() {
            return Ok(j.clone());
        }
        let j = Arc::new(Journal::open(&self.path, self.key.as_ref())?);
        *slot = Some(j.clone());
        Ok(j)
    }

    /// Write whatever the journal holds, if it was opened.
    pub(super) fn flush_journal(&self) -> Result<()> {
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
    /// [`super::journal::DEBOUNCE`]; never lost on a clean shutdown).
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
}
