//! A model that loads on first use, on the calling thread, and can be unloaded when idle. A
//! failed load is not remembered: the next use tries again (the user may have run the set-up
//! script in between).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::Result;

type Loader<T> = Box<dyn Fn() -> Result<T> + Send + Sync>;

pub struct Lazy<T> {
    slot: Mutex<Option<Arc<T>>>,
    load: Mutex<Loader<T>>,
    /// When it was last handed out, in ms after `epoch`.
    last_used: AtomicU64,
    epoch: Instant,
}

impl<T> Lazy<T> {
    /// Nothing is loaded until [`Lazy::get`].
    pub fn with(load: impl Fn() -> Result<T> + Send + Sync + 'static) -> Lazy<T> {
        Lazy {
            slot: Mutex::new(None),
            load: Mutex::new(Box::new(load)),
            last_used: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// The loaded value, loading it now if it is not loaded.
    pub fn get(&self) -> Result<Arc<T>> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        self.touch();
        if let Some(v) = slot.as_ref() {
            return Ok(v.clone());
        }
        let load = self.load.lock().unwrap_or_else(|p| p.into_inner());
        let v = Arc::new(load()?);
        *slot = Some(v.clone());
        Ok(v)
    }

    fn touch(&self) {
        self.last_used
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// Whether it has been loaded (start-up must leave this false).
    pub fn is_loaded(&self) -> bool {
        self.slot.lock().map(|s| s.is_some()).unwrap_or(false)
    }

    /// Load something else from now on (another model); what is loaded is dropped.
    pub fn replace_loader(&self, load: impl Fn() -> Result<T> + Send + Sync + 'static) {
        *self.load.lock().unwrap_or_else(|p| p.into_inner()) = Box::new(load);
        self.unload();
    }

    /// Drop the loaded value (users holding an `Arc` keep theirs until they let go).
    pub fn unload(&self) {
        self.slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Unload if nothing asked for it for `idle` and nobody holds it (a long dictation keeps
    /// its handle: it is in use, however long ago it was asked for); returns whether it did.
    pub fn unload_if_idle(&self, idle: Duration) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|v| Arc::strong_count(v) > 1) {
            self.touch();
            return false;
        }
        let used = Duration::from_millis(self.last_used.load(Ordering::Relaxed));
        if slot.is_some() && self.epoch.elapsed().saturating_sub(used) >= idle {
            slot.take();
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn counting() -> (Arc<AtomicUsize>, Lazy<usize>) {
        let loads = Arc::new(AtomicUsize::new(0));
        let l = loads.clone();
        (
            loads,
            Lazy::with(move || Ok(l.fetch_add(1, Ordering::SeqCst) + 1)),
        )
    }

    #[test]
    fn an_idle_model_is_unloaded_and_the_next_use_loads_it_again() {
        let (loads, lazy) = counting();
        assert!(!lazy.is_loaded(), "nothing loads before the first use");
        assert!(!lazy.unload_if_idle(Duration::ZERO), "nothing to unload");
        assert_eq!(*lazy.get().unwrap(), 1);
        assert!(
            !lazy.unload_if_idle(Duration::from_secs(3600)),
            "used a moment ago"
        );
        assert!(lazy.is_loaded());
        std::thread::sleep(Duration::from_millis(20));
        assert!(lazy.unload_if_idle(Duration::from_millis(10)));
        assert!(!lazy.is_loaded());
        assert_eq!(*lazy.get().unwrap(), 2, "loaded again on demand");
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_model_in_use_is_not_unloaded_however_long_ago_it_was_asked_for() {
        let (_, lazy) = counting();
        let held = lazy.get().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!lazy.unload_if_idle(Duration::from_millis(10)));
        assert!(lazy.is_loaded());
        drop(held);
        // Its use just ended: it counts as used now.
        assert!(!lazy.unload_if_idle(Duration::from_millis(500)));
        std::thread::sleep(Duration::from_millis(600));
        assert!(lazy.unload_if_idle(Duration::from_millis(500)));
    }

    #[test]
    fn a_failed_load_is_tried_again() {
        let tries = Arc::new(AtomicUsize::new(0));
        let t = tries.clone();
        let lazy: Lazy<u8> = Lazy::with(move || {
            if t.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(crate::Error::InvalidInput("not yet".into()))
            } else {
                Ok(7)
            }
        });
        assert!(lazy.get().is_err());
        assert_eq!(*lazy.get().unwrap(), 7);
    }
}
