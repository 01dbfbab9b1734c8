//! The `#[tauri::command]`s, one file per area: `memories.rs` (notes, search), `dictation.rs`
//! (microphones, dictating, drafts), `exchange.rs` (import, export, transcribing a file), `holders.rs` (who holds what, the demo town), `voice.rs` (reading aloud), `settings.rs`, `privacy.rs` (Settings → Privacy, the passphrase prompt) and `dashboard.rs`
//! (the performance dashboard). Each is a thin call into the engine or a manager; slow work runs
//! on a blocking thread so the window stays responsive.

pub mod dashboard;
pub mod dictation;
pub mod exchange;
pub mod holders;
pub mod memories;
pub mod privacy;
pub mod settings;
pub mod voice;

use crate::error::{CmdResult, CommandError, ErrorKind};

/// Run engine work on Tauri's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> umwelt::Result<T> + Send + 'static,
) -> CmdResult<T> {
    blocking_cmd(move || f().map_err(CommandError::from)).await
}

/// Run a manager's work on Tauri's blocking pool.
pub(crate) async fn blocking_cmd<T: Send + 'static>(
    f: impl FnOnce() -> CmdResult<T> + Send + 'static,
) -> CmdResult<T> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| {
        CommandError::new(
            ErrorKind::Internal,
            format!("a background task failed: {e}"),
        )
    })?
}
