//! Dictation: microphones, start and stop, and the drafts a dictation leaves to be read, edited
//! and saved. The work is in the engine and `crate::dictating`.

use tauri::{AppHandle, Runtime, State};
use umwelt::speech::{recorder, Draft, InputDevice};
use umwelt::Memory;

use super::blocking;
use crate::dictating;
use crate::error::CmdResult;
use crate::state::AppState;

/// The microphones the system offers.
#[tauri::command]
pub async fn list_microphones() -> CmdResult<Vec<InputDevice>> {
    blocking(recorder::input_devices).await
}

/// Show the level of `device` (or the chosen microphone) as `microphone-level` events, without
/// recording; resolves with the device's name.
#[tauri::command]
pub async fn start_microphone_check<R: Runtime>(
    app: AppHandle<R>,
    device: Option<String>,
) -> CmdResult<String> {
    tauri::async_runtime::spawn_blocking(move || crate::mic_check::start(&app, device))
        .await
        .map_err(|e| crate::error::CommandError::new("internal", e.to_string()))?
}

/// End the microphone check (resolves once the device is closed).
#[tauri::command]
pub async fn stop_microphone_check<R: Runtime>(app: AppHandle<R>) -> CmdResult<()> {
    tauri::async_runtime::spawn_blocking(move || crate::mic_check::stop(&app))
        .await
        .map_err(|e| crate::error::CommandError::new("internal", e.to_string()))
}

/// Start dictating from `device` (or the microphone chosen in Settings, or the default).
#[tauri::command]
pub async fn start_dictation<R: Runtime>(
    app: AppHandle<R>,
    device: Option<String>,
) -> CmdResult<()> {
    tauri::async_runtime::spawn_blocking(move || dictating::start(&app, device))
        .await
        .map_err(|e| crate::error::CommandError::new("internal", e.to_string()))?
}

/// Stop dictating; resolves with the draft (also announced as a `dictation-state` event).
#[tauri::command]
pub async fn stop_dictation<R: Runtime>(app: AppHandle<R>) -> CmdResult<Draft> {
    tauri::async_runtime::spawn_blocking(move || dictating::stop(&app))
        .await
        .map_err(|e| crate::error::CommandError::new("internal", e.to_string()))?
}

/// Dictations not yet saved, oldest first.
#[tauri::command]
pub async fn list_drafts(state: State<'_, AppState>) -> CmdResult<Vec<Draft>> {
    let dictation = state.dictation.clone();
    blocking(move || Ok(dictation.drafts())).await
}

/// Save a draft, with the user's edit of its text, as a memory.
#[tauri::command]
pub async fn save_draft(state: State<'_, AppState>, id: String, text: String) -> CmdResult<Memory> {
    let (dictation, store, scope) = (
        state.dictation.clone(),
        state.store.clone(),
        state.scope.clone(),
    );
    blocking(move || dictation.save(&id, &text, &store, &scope, "")).await
}

/// Throw a draft and its recording away.
#[tauri::command]
pub async fn discard_draft(state: State<'_, AppState>, id: String) -> CmdResult<()> {
    let dictation = state.dictation.clone();
    blocking(move || dictation.discard(&id)).await
}

/// Transcribe a draft's recording again (after a failure).
#[tauri::command]
pub async fn retry_draft<R: Runtime>(app: AppHandle<R>, id: String) -> CmdResult<Draft> {
    blocking(move || {
        use tauri::Manager;
        let state = app.state::<AppState>();
        let ears = dictating::ears(&state)?;
        state.dictation.retry(&id, &ears)
    })
    .await
}
