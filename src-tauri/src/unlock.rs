//! The app while its memory file waits for a passphrase: what the window must ask, and the
//! one attempt at a time to open the file with the answer (`commands/privacy.rs`). Managed
//! from the start, asking nothing when the file opened at once.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

use umwelt::at_rest::Ask;

use crate::state::AppState;

/// Starts the app on the state the passphrase opened (`start::begin`, bound to the running app).
pub type Begin = Box<dyn Fn(AppState, Instant) -> tauri::Result<()> + Send + Sync>;

pub struct Unlocking {
    /// The data folder to open.
    pub data_dir: PathBuf,
    /// What the window asks now (the reason changes after a wrong passphrase); `None` once the
    /// memory file is open.
    pub ask: Mutex<Option<Ask>>,
    /// When the start began.
    pub started: Instant,
    /// An attempt is under way (Argon2id and a conversion take a while): a second waits.
    pub trying: AtomicBool,
    pub begin: Begin,
}

impl Unlocking {
    pub fn new(data_dir: PathBuf, ask: Option<Ask>, started: Instant, begin: Begin) -> Unlocking {
        Unlocking {
            data_dir,
            ask: Mutex::new(ask),
            started,
            trying: AtomicBool::new(false),
            begin,
        }
    }

    pub fn ask(&self) -> Option<Ask> {
        self.ask.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set(&self, ask: Option<Ask>) {
        *self.ask.lock().unwrap_or_else(|p| p.into_inner()) = ask;
    }
}
