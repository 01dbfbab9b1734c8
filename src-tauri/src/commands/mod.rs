//! The `#[tauri::command]`s, one file per area: `memories.rs` (notes, search), `dictation.rs`
//! (microphones, dictating, drafts),
//! `voice.rs` (reading aloud, settings) and `perf.rs` (the performance dashboard). Each is a thin call into the engine; slow work runs on
//! a blocking thread so the window stays responsive.

pub mod dictation;
pub mod memories;
pub mod perf;
pub mod voice;

use crate::error::{CmdResult, CommandError};

/// Run engine work on Tauri's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> umwelt::Result<T> + Send + 'static,
) -> CmdResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new("internal", format!("a background task failed: {e}")))?
        .map_err(CommandError::from)
}
