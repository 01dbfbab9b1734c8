//! The `#[tauri::command]`s: each one a thin call into the engine. Slow work (embedding,
//! transcription) runs on a blocking thread so the window stays responsive.

use tauri::State;
use umwelt::speech::{recorder, InputDevice, Recorder};
use umwelt::{Hit, Memory, MemoryId};

use crate::error::{CmdResult, CommandError};
use crate::state::AppState;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> umwelt::Result<T> + Send + 'static) -> CmdResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new("internal", format!("a background task failed: {e}")))?
        .map_err(CommandError::from)
}

/// Memories, newest first; `before` (unix ms) pages back.
#[tauri::command]
pub async fn list_memories(state: State<'_, AppState>, limit: u32, before: Option<f64>) -> CmdResult<Vec<Memory>> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || store.list(&scope, limit as usize, before.map(|b| b as i64))).await
}

/// Remember a typed note.
#[tauri::command]
pub async fn remember(state: State<'_, AppState>, text: String) -> CmdResult<Memory> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || store.remember(&scope, "", &text).and_then(|id| store.get(id))).await
}

/// Search by meaning.
#[tauri::command]
pub async fn recall(state: State<'_, AppState>, query: String, k: u32) -> CmdResult<Vec<Hit>> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || store.recall(&query, &scope, None, k as usize)).await
}

/// Forget one memory.
#[tauri::command]
pub async fn delete_memory(state: State<'_, AppState>, id: f64) -> CmdResult<()> {
    let store = state.store.clone();
    blocking(move || store.delete(id as MemoryId)).await
}

/// The microphones the system offers.
#[tauri::command]
pub async fn list_microphones() -> CmdResult<Vec<InputDevice>> {
    blocking(recorder::input_devices).await
}

/// Start recording from `device` (or the default microphone).
#[tauri::command]
pub fn start_recording(state: State<'_, AppState>, device: Option<String>) -> CmdResult<()> {
    let mut slot = state.recording.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return Err(CommandError::new("busy", "a recording is already running: press Stop first"));
    }
    *slot = Some(Recorder::start(device.as_deref())?);
    Ok(())
}

/// Stop recording; the audio is saved, transcribed and remembered.
#[tauri::command]
pub async fn stop_recording(state: State<'_, AppState>) -> CmdResult<Memory> {
    let rec = state
        .recording
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(|| CommandError::new("input", "nothing is being recorded: press Record first"))?;
    let (store, transcriber, dictation, scope) = (state.store.clone(), state.transcriber.clone(), state.dictation.clone(), state.scope.clone());
    blocking(move || {
        let pcm = rec.stop()?;
        dictation.finish(&pcm, &*transcriber.get()?, &store, &scope, "")
    })
    .await
}
