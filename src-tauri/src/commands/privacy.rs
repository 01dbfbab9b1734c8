//! Settings → Privacy and the passphrase prompt: how the memory file is kept on the disk, and
//! opening it with the passphrase the window asked for (`umwelt::at_rest`).

use std::sync::atomic::Ordering;

use tauri::State;
use umwelt::at_rest::Ask;
use umwelt::store::cipher::Key;

use super::blocking;
use crate::error::{CmdResult, CommandError, ErrorKind};
use crate::state::{AppState, Opening, Privacy};
use crate::unlock::Unlocking;

/// What the window must ask before anything else: a passphrase, and why; `None` once the
/// memory file is open.
#[tauri::command]
#[specta::specta]
pub fn locked(unlocking: State<'_, Unlocking>) -> Option<Ask> {
    unlocking.ask()
}

/// Open the memory file with `passphrase` and start the app: `None` when it opened, or what
/// to ask now (a wrong passphrase: asked again, with nothing changed).
#[tauri::command]
#[specta::specta]
pub async fn unlock(unlocking: State<'_, Unlocking>, passphrase: String) -> CmdResult<Option<Ask>> {
    if unlocking.ask().is_none() {
        return Ok(None);
    }
    if unlocking.trying.swap(true, Ordering::SeqCst) {
        return Err(CommandError::new(
            ErrorKind::Busy,
            "The passphrase is being checked; wait a moment.",
        ));
    }
    // Zeroed when dropped, here: the key keeps its own zeroed copy.
    let passphrase = zeroize::Zeroizing::new(passphrase);
    let key = Key::passphrase(&passphrase);
    drop(passphrase);
    let data_dir = unlocking.data_dir.clone();
    let opened = match key {
        Ok(key) => blocking(move || AppState::open(data_dir, Some(&key))).await,
        Err(e) => Err(e.into()),
    };
    let result = match opened {
        Ok(Opening::Ready(state)) => (unlocking.begin)(*state, unlocking.started)
            .map(|()| {
                unlocking.set(None);
                None
            })
            .map_err(|e| {
                CommandError::new(ErrorKind::Internal, format!("Umwelt could not start: {e}"))
            }),
        Ok(Opening::Ask(ask)) => {
            unlocking.set(Some(ask.clone()));
            Ok(Some(ask))
        }
        Err(e) => Err(e),
    };
    unlocking.trying.store(false, Ordering::SeqCst);
    result
}

/// How the memory file is kept on the disk this session.
#[tauri::command]
#[specta::specta]
pub fn privacy(state: State<'_, AppState>) -> Privacy {
    state.privacy.clone()
}
