//! A model that loads on first use, on the calling thread. A failed load is not remembered: the
//! next use tries again (the user may have run the set-up script in between).

use std::sync::{Arc, Mutex};

use crate::error::Result;

pub struct Lazy<T> {
    slot: Mutex<Option<Arc<T>>>,
    load: fn() -> Result<T>,
}

impl<T> Lazy<T> {
    /// Nothing is loaded until [`Lazy::get`].
    pub fn with(load: fn() -> Result<T>) -> Lazy<T> {
        Lazy {
            slot: Mutex::new(None),
            load,
        }
    }

    /// The loaded value, loading it now if this is the first use.
    pub fn get(&self) -> Result<Arc<T>> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = slot.as_ref() {
            return Ok(v.clone());
        }
        let v = Arc::new((self.load)()?);
        *slot = Some(v.clone());
        Ok(v)
    }

    /// Whether it has been loaded (start-up must leave this false).
    pub fn is_loaded(&self) -> bool {
        self.slot.lock().map(|s| s.is_some()).unwrap_or(false)
    }
}
