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

    /// Unload if nothing asked for it for `idle`; returns whether it did.
    pub fn unload_if_idle(&self, idle: Duration) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let used = Duration::from_millis(self.last_used.load(Ordering::Relaxed));
        if slot.is_some() && self.epoch.elapsed().saturating_sub(used) >= idle {
            slot.take();
            true
        } else {
            false
        }
    }
}
