//! History (the messages of a session) and the turn log (one record per assistant turn, with the
//! time of each stage), written through a debounced writer.
//!
//! An append is acknowledged once it is in the writer's queue (microseconds); a thread of its own
//! writes the queue in one transaction at most [`DEBOUNCE`] later. Reads, [`Journal::flush`] and
//! dropping the journal write whatever is queued first, so an acknowledged message is never lost
//! on a clean shutdown. With `UMWELT_PERF=off` every append is its own transaction.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::optimisations;

/// How long an acknowledged append may wait before it is on disk.
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// One message of a session's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Message {
    pub role: String,
    pub text: String,
    /// Unix ms.
    pub at: i64,
}

/// The time one stage of a turn took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Stage {
    pub stage: String,
    pub ms: f64,
}

/// One assistant turn, as the turn log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Turn {
    pub user_text: String,
    pub reply_text: String,
    pub stages: Vec<Stage>,
    /// Unix ms.
    pub at: i64,
}

enum Entry {
    Message {
        scope: String,
        session: String,
        msg: Message,
    },
    Turn {
        scope: String,
        session: String,
        turn: Turn,
    },
}

struct Shared {
    queue: Mutex<Vec<Entry>>,
    wake: Condvar,
    stop: AtomicBool,
    conn: Mutex<Connection>,
}

/// The debounced writer. Owned by the [`Store`](super::Store); created on first use.
pub struct Journal {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

fn write(conn: &mut Connection, entries: Vec<Entry>) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let tx = super::write_tx(conn)?;
    {
        let mut holder = tx.prepare_cached("INSERT INTO holder(name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id")?;
        let mut msg = tx.prepare_cached(
            "INSERT INTO message(holder_id, session, role, text, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut turn = tx.prepare_cached("INSERT INTO turn(holder_id, session, at, user_text, reply_text, stages) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        for e in entries {
            match e {
                Entry::Message {
                    scope,
                    session,
                    msg: m,
                } => {
                    let h: i64 = holder.query_row(params![scope, m.at], |r| r.get(0))?;
                    msg.execute(params![h, session, m.role, m.text, m.at])?;
                }
                Entry::Turn {
                    scope,
                    session,
                    turn: t,
                } => {
                    let h: i64 = holder.query_row(params![scope, t.at], |r| r.get(0))?;
                    let stages = serde_json::to_string(&t.stages).expect("stages serialise");
                    turn.execute(params![h, session, t.at, t.user_text, t.reply_text, stages])?;
                }
            }
        }
    }
    tx.commit()?;
    Ok(())
}

impl Journal {
    /// Open a writer on the store file at `path` (its own connection, keyed like the store's).
    pub(crate) fn open(path: &Path, key: Option<&super::cipher::KeySpec>) -> Result<Journal> {
        let conn = super::connect(path)?;
        if let Some(k) = key {
            k.apply(&conn, path)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
            conn: Mutex::new(conn),
        });
        let thread = if optimisations::enabled() {
            let s = shared.clone();
            Some(
                std::thread::Builder::new()
                    .name("umwelt-journal".into())
                    .spawn(move || writer(s))
                    .map_err(crate::Error::io("starting the history writer"))?,
            )
        } else {
            None
        };
        Ok(Journal { shared, thread })
    }

    fn push(&self, e: Entry) -> Result<()> {
        if self.thread.is_none() {
            return write(
                &mut self.shared.conn.lock().unwrap_or_else(|p| p.into_inner()),
                vec![e],
            );
        }
        let mut q = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.push(e);
        if q.len() == 1 {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Append a message to `scope` / `session`.
    pub fn append(&self, scope: &str, session: &str, msg: Message) -> Result<()> {
        self.push(Entry::Message {
            scope: scope.into(),
            session: session.into(),
            msg,
        })
    }

    /// Write one turn down.
    pub fn log_turn(&self, scope: &str, session: &str, turn: Turn) -> Result<()> {
        self.push(Entry::Turn {
            scope: scope.into(),
            session: session.into(),
            turn,
        })
    }

    /// Write everything queued, now, on this thread.
    pub fn flush(&self) -> Result<()> {
        let mut conn = self.shared.conn.lock().unwrap_or_else(|p| p.into_inner());
        let entries =
            std::mem::take(&mut *self.shared.queue.lock().unwrap_or_else(|p| p.into_inner()));
        write(&mut conn, entries)
    }
}

fn writer(s: Arc<Shared>) {
    loop {
        {
            let q = s.queue.lock().unwrap_or_else(|p| p.into_inner());
            let q = s
                .wake
                .wait_while(q, |q| q.is_empty() && !s.stop.load(Ordering::Relaxed))
                .unwrap_or_else(|p| p.into_inner());
            if q.is_empty() && s.stop.load(Ordering::Relaxed) {
                return;
            }
        }
        if !s.stop.load(Ordering::Relaxed) {
            std::thread::sleep(DEBOUNCE);
        }
        let mut conn = s.conn.lock().unwrap_or_else(|p| p.into_inner());
        let entries = std::mem::take(&mut *s.queue.lock().unwrap_or_else(|p| p.into_inner()));
        if let Err(e) = write(&mut conn, entries) {
            tracing::warn!("could not write history: {e}");
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                tracing::error!("the history writer crashed; writing what it held here");
            }
        }
        if let Err(e) = self.flush() {
            tracing::warn!("could not write the last history entries: {e}");
        }
    }
}
