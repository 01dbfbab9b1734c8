//! Forgetting a memory with Undo. A memory the user deletes disappears from the window at once,
//! but reaches the store only after [`UNDO_SECONDS`]: until then Undo brings it back untouched
//! (its text, vector, versions and recording were never removed). When the window closes or the
//! app exits, every deletion still waiting is carried out ([`Forgetting::flush`]), so a delete
//! is never silently dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use umwelt::{Memory, MemoryId, Store};

/// How long a deleted memory can be brought back.
pub const UNDO_SECONDS: u64 = 10;

/// The deletions waiting for their Undo time to pass.
pub struct Forgetting {
    store: Arc<Store>,
    delay: Duration,
    /// Each waiting memory, with the ticket of its deletion (a delete, undo and delete again
    /// gets a new ticket, so the first timer does nothing).
    waiting: Mutex<HashMap<MemoryId, u64>>,
    tickets: AtomicU64,
}

impl Forgetting {
    pub fn new(store: Arc<Store>) -> Arc<Forgetting> {
        Forgetting::with_delay(store, Duration::from_secs(UNDO_SECONDS))
    }

    pub fn with_delay(store: Arc<Store>, delay: Duration) -> Arc<Forgetting> {
        Arc::new(Forgetting {
            store,
            delay,
            waiting: Mutex::new(HashMap::new()),
            tickets: AtomicU64::new(1),
        })
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<MemoryId, u64>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Delete `id` once the Undo time has passed (an unknown id is an error now).
    pub fn delete_later(self: &Arc<Self>, id: MemoryId) -> umwelt::Result<()> {
        self.store.get(id)?;
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        self.waiting().insert(id, ticket);
        let me = self.clone();
        std::thread::Builder::new()
            .name("umwelt-forget".into())
            .spawn(move || {
                std::thread::sleep(me.delay);
                me.carry_out(id, Some(ticket));
            })
            .map_err(|e| umwelt::Error::Io {
                context: "starting the deletion timer".into(),
                source: e,
            })?;
        Ok(())
    }

    /// Bring back a memory whose deletion is still waiting.
    pub fn undo(&self, id: MemoryId) -> umwelt::Result<Memory> {
        if self.waiting().remove(&id).is_none() {
            return Err(umwelt::Error::NotFound(format!(
                "memory {id} (it was deleted more than {UNDO_SECONDS} s ago, or never)"
            )));
        }
        self.store.get(id)
    }

    /// Whether `id` is deleted but not yet gone (the window must not show it).
    pub fn is_waiting(&self, id: MemoryId) -> bool {
        self.waiting().contains_key(&id)
    }

    /// Carry out every waiting deletion now (the window closes, the app exits).
    pub fn flush(&self) {
        let ids: Vec<MemoryId> = self.waiting().keys().copied().collect();
        for id in ids {
            self.carry_out(id, None);
        }
    }

    /// Delete `id` if it still waits (under `ticket`, when given).
    fn carry_out(&self, id: MemoryId, ticket: Option<u64>) {
        {
            let mut waiting = self.waiting();
            match waiting.get(&id) {
                Some(t) if ticket.is_none_or(|want| *t == want) => {
                    waiting.remove(&id);
                }
                _ => return,
            }
        }
        match self.store.delete(id) {
            Ok(()) | Err(umwelt::Error::NotFound(_)) => {}
            Err(e) => tracing::error!("a deleted memory ({id}) could not be removed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Arc<Store>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("m.sqlite")).unwrap());
        (dir, store)
    }

    fn note(store: &Store, text: &str) -> MemoryId {
        store
            .remember_with_vector(
                &umwelt::store::NewMemory {
                    scope: "me",
                    text,
                    ..Default::default()
                },
                &[1.0; umwelt::embed::EMBED_DIM],
            )
            .unwrap()
    }

    #[test]
    fn undo_in_time_keeps_the_memory_and_late_deletes_it() {
        let (_dir, store) = store();
        let (kept, gone) = (note(&store, "kept"), note(&store, "gone"));
        let f = Forgetting::with_delay(store.clone(), Duration::from_millis(200));
        f.delete_later(kept).unwrap();
        f.delete_later(gone).unwrap();
        assert!(f.is_waiting(kept));
        assert_eq!(f.undo(kept).unwrap().text, "kept");
        std::thread::sleep(Duration::from_millis(600));
        assert!(store.get(kept).is_ok(), "an undone delete must not happen");
        assert!(store.get(gone).is_err(), "a delete not undone must happen");
        assert!(f.undo(gone).is_err());
    }

    #[test]
    fn flush_carries_out_what_waits_and_a_redelete_gets_a_new_timer() {
        let (_dir, store) = store();
        let a = note(&store, "a");
        let f = Forgetting::with_delay(store.clone(), Duration::from_secs(3600));
        f.delete_later(a).unwrap();
        f.undo(a).unwrap();
        f.delete_later(a).unwrap();
        assert!(store.get(a).is_ok());
        f.flush();
        assert!(store.get(a).is_err());
        assert!(!f.is_waiting(a));
        assert!(f.delete_later(a).is_err(), "an unknown memory is an error");
    }
}
