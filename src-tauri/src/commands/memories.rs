//! Notes, search and dictation.

use std::time::Instant;

use tauri::State;
use umwelt::speech::{recorder, InputDevice, Recorder};
use umwelt::store::now_ms;
use umwelt::{Hit, Memory, MemoryId};

use super::blocking;
use crate::error::{CmdResult, CommandError};
use crate::state::AppState;

/// Memories, newest first; `before` (unix ms) pages back.
#[tauri::command]
pub async fn list_memories(
    state: State<'_, AppState>,
    limit: u32,
    before: Option<f64>,
) -> CmdResult<Vec<Memory>> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || store.list(&scope, limit as usize, before.map(|b| b as i64))).await
}

/// Remember a typed note.
#[tauri::command]
pub async fn remember(state: State<'_, AppState>, text: String) -> CmdResult<Memory> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || {
        store
            .remember(&scope, "", &text)
            .and_then(|id| store.get(id))
    })
    .await
}

/// Search by meaning.
#[tauri::command]
pub async fn recall(state: State<'_, AppState>, query: String, k: u32) -> CmdResult<Vec<Hit>> {
    let (store, scope, runs) = (state.store.clone(), state.scope.clone(), state.runs.clone());
    blocking(move || {
        let t = Instant::now();
        let hits = store.recall(&query, &scope, None, k as usize)?;
        let _ = runs.record("recall", now_ms(), t.elapsed().as_secs_f64() * 1e3);
        Ok(hits)
    })
    .await
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
        return Err(CommandError::new(
            "busy",
            "a recording is already running: press Stop first",
        ));
    }
    *slot = Some(Recorder::start(
        device.as_deref(),
        state.dictation.recordings_dir(),
    )?);
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
        .ok_or_else(|| {
            CommandError::new("input", "nothing is being recorded: press Record first")
        })?;
    let (store, transcriber, dictation, scope, runs) = (
        state.store.clone(),
        state.transcriber.clone(),
        state.dictation.clone(),
        state.scope.clone(),
        state.runs.clone(),
    );
    blocking(move || {
        let recording = rec.stop()?;
        let t = Instant::now();
        let memory =
            dictation.finish_spool(&recording.spool, &*transcriber.get()?, &store, &scope, "")?;
        let _ = runs.record("dictation", now_ms(), t.elapsed().as_secs_f64() * 1e3);
        Ok(memory)
    })
    .await
}
