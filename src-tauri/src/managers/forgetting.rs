//! Forgetting a memory with Undo. A memory the user deletes disappears from the window at once,
//! but reaches the store only after [`UNDO_SECONDS`]: until then Undo brings it back untouched
//! (its text, vector, versions and recording were never removed). When the window closes or the
//! app exits, every deletion still waiting is carried out ([`Forgetting::flush`]), so a delete
//! is never silently dropped.
//!
//! Forgetting a whole session, or everything, waits the same way ([`Forgetting::forget_later`]):
//! the user confirms a count the window showed, the backend checks that count against the
//! memories there are (a stale or forged request is refused), the memories leave the window at
//! once, and Undo brings them all back until the time has passed. When it has, exactly the
//! confirmed memories go: if others were added to the session meanwhile, those stay, with the
//! session's history.

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
    /// The whole sessions (or everything) waiting, by ticket.
    groups: Mutex<HashMap<u64, Group>>,
    tickets: AtomicU64,
}

/// What forgetting many memories at once takes: a holder's session, or all it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    Session(String),
    Everything,
}

#[derive(Debug, Clone)]
struct Group {
    scope: String,
    what: Forget,
    /// The memories the user confirmed.
    ids: Vec<MemoryId>,
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
            groups: Mutex::new(HashMap::new()),
            tickets: AtomicU64::new(1),
        })
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<MemoryId, u64>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn groups(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Group>> {
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Delete `id` once the Undo time has passed (an unknown id is an error now).
    pub fn delete_later(self: &Arc<Self>, id: MemoryId) -> umwelt::Result<()> {
        self.store.get(id)?;
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        self.waiting().insert(id, ticket);
        self.after_delay(move |me| me.carry_out(id, Some(ticket)))
    }

    fn after_delay(
        self: &Arc<Self>,
        f: impl FnOnce(&Forgetting) + Send + 'static,
    ) -> umwelt::Result<()> {
        let me = self.clone();
        std::thread::Builder::new()
            .name("umwelt-forget".into())
            .spawn(move || {
                std::thread::sleep(me.delay);
                f(&me);
            })
            .map(drop)
            .map_err(|e| umwelt::Error::Io {
                context: "starting the deletion timer".into(),
                source: e,
            })
    }

    /// Forget a session of `scope`, or everything it holds, once the Undo time has passed.
    /// `confirmed` is how many memories the user was told would go: if there are not that many
    /// now, nothing happens and the error says to look again. Returns the ticket that
    /// [`Forgetting::undo_forget`] takes.
    pub fn forget_later(
        self: &Arc<Self>,
        scope: &str,
        what: Forget,
        confirmed: u32,
    ) -> umwelt::Result<u64> {
        let session = match &what {
            Forget::Session(s) => Some(s.as_str()),
            Forget::Everything => None,
        };
        // Counted as the window shows them: a memory already deleted but within its own Undo
        // time is not among them (it goes anyway, on its own timer or with this group).
        let ids = self.store.ids_held(scope, session)?;
        let shown = {
            let waiting = self.waiting();
            ids.iter().filter(|id| !waiting.contains_key(id)).count()
        };
        if shown != confirmed as usize {
            return Err(umwelt::Error::InvalidInput(format!(
                "there are {shown} memories to forget now, not the {confirmed} you confirmed \
                 (something changed meanwhile): nothing was forgotten; look again and confirm"
            )));
        }
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        {
            let mut waiting = self.waiting();
            for &id in &ids {
                waiting.entry(id).or_insert(ticket);
            }
        }
        self.groups().insert(
            ticket,
            Group {
                scope: scope.to_string(),
                what,
                ids,
            },
        );
        self.after_delay(move |me| me.carry_out_group(ticket))?;
        Ok(ticket)
    }

    /// Bring back a session (or everything) whose forgetting is still waiting; returns how many
    /// memories came back.
    pub fn undo_forget(&self, ticket: u64) -> umwelt::Result<u32> {
        let Some(group) = self.groups().remove(&ticket) else {
            return Err(umwelt::Error::NotFound(format!(
                "a forgetting to undo (it was carried out more than {UNDO_SECONDS} s ago)"
            )));
        };
        let mut waiting = self.waiting();
        waiting.retain(|_, t| *t != ticket);
        Ok(group.ids.len() as u32)
    }

    fn carry_out_group(&self, ticket: u64) {
        let Some(group) = self.groups().remove(&ticket) else {
            return;
        };
        let session = match &group.what {
            Forget::Session(s) => Some(s.as_str()),
            Forget::Everything => None,
        };
        let result = (|| {
            let now = self.store.ids_held(&group.scope, session)?;
            if now == group.ids {
                match session {
                    Some(s) => self.store.forget_session(&group.scope, s)?,
                    None => self.store.forget(&group.scope)?,
                };
            } else {
                // Memories came meanwhile: only the confirmed ones go.
                for &id in &group.ids {
                    match self.store.delete(id) {
                        Ok(()) | Err(umwelt::Error::NotFound(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok::<_, umwelt::Error>(())
        })();
        self.waiting().retain(|_, t| *t != ticket);
        if let Err(e) = result {
            tracing::error!("forgetting {} memories failed: {e}", group.ids.len());
        }
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

    /// How many of `scope`'s memories that `filter` keeps the window shows: those deleted but
    /// within their Undo time are not counted (the count a confirmation names).
    pub fn count_shown(
        &self,
        scope: &str,
        filter: &umwelt::store::Filter,
    ) -> umwelt::Result<usize> {
        let all = self.store.count_matching(scope, filter)?;
        let waiting: Vec<MemoryId> = self.waiting().keys().copied().collect();
        let mut hidden = 0;
        for id in waiting {
            if let Ok(m) = self.store.get(id) {
                if m.scope == scope && filter.keeps(&m) {
                    hidden += 1;
                }
            }
        }
        Ok(all.saturating_sub(hidden))
    }

    /// Whether `id` is deleted but not yet gone (the window must not show it).
    pub fn is_waiting(&self, id: MemoryId) -> bool {
        self.waiting().contains_key(&id)
    }

    /// Carry out every waiting deletion now (the window closes, the app exits).
    pub fn flush(&self) {
        let groups: Vec<u64> = self.groups().keys().copied().collect();
        for ticket in groups {
            self.carry_out_group(ticket);
        }
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
    fn forgetting_everything_counts_what_the_window_shows_not_what_waits_to_go() {
        let (_dir, store) = store();
        let (a, _b, _c) = (note(&store, "a"), note(&store, "b"), note(&store, "c"));
        let f = Forgetting::with_delay(store.clone(), Duration::from_secs(30));
        f.delete_later(a).unwrap();
        let all = umwelt::store::Filter::all();
        assert_eq!(
            f.count_shown("me", &all).unwrap(),
            2,
            "the deleted one is not shown"
        );
        let e = f
            .forget_later("me", Forget::Everything, 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("there are 2"), "{e}");
        f.forget_later("me", Forget::Everything, 2).unwrap();
        assert_eq!(f.count_shown("me", &all).unwrap(), 0);
    }

    #[test]
    fn a_session_goes_only_as_confirmed_after_the_undo_time_and_undo_brings_it_back() {
        let (_dir, store) = store();
        let in_trip = |text: &str| {
            store
                .remember_with_vector(
                    &umwelt::store::NewMemory {
                        scope: "me",
                        session: "trip",
                        text,
                        ..Default::default()
                    },
                    &[1.0; umwelt::embed::EMBED_DIM],
                )
                .unwrap()
        };
        let (a, b) = (in_trip("a"), in_trip("b"));
        let other = note(&store, "not in the trip");
        let f = Forgetting::with_delay(store.clone(), Duration::from_millis(300));
        let trip = Forget::Session("trip".into());
        // A count the user did not see is refused, and nothing changes.
        let e = f
            .forget_later("me", trip.clone(), 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not the 3 you confirmed"), "{e}");
        assert!(!f.is_waiting(a));
        // Confirmed: hidden at once, back with Undo.
        let ticket = f.forget_later("me", trip.clone(), 2).unwrap();
        assert!(f.is_waiting(a) && f.is_waiting(b) && !f.is_waiting(other));
        assert_eq!(f.undo_forget(ticket).unwrap(), 2);
        assert!(!f.is_waiting(a));
        std::thread::sleep(Duration::from_millis(600));
        assert!(
            store.get(a).is_ok() && store.get(b).is_ok(),
            "an undone forgetting must not happen"
        );
        // Not undone: gone after the delay; a memory added meanwhile stays.
        f.forget_later("me", trip, 2).unwrap();
        let late = in_trip("added while it waited");
        std::thread::sleep(Duration::from_millis(700));
        assert!(store.get(a).is_err() && store.get(b).is_err());
        assert!(store.get(late).is_ok() && store.get(other).is_ok());
        // Everything, carried out at exit without waiting.
        let slow = Forgetting::with_delay(store.clone(), Duration::from_secs(600));
        slow.forget_later("me", Forget::Everything, 2).unwrap();
        slow.flush();
        assert_eq!(store.count("me").unwrap(), 0);
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
