//! Dictation: microphones, the level check, start and stop, and the drafts a dictation leaves to
//! be read, edited and saved. The microphone's owner (`crate::managers::microphone`) and the
//! engine do the work.

use tauri::State;
use umwelt::speech::{recorder, Draft, InputDevice};
use umwelt::Memory;

use super::blocking;
use crate::error::CmdResult;
use crate::events::DictationState;
use crate::state::AppState;

/// The microphones the system offers.
#[tauri::command]
#[specta::specta]
pub async fn list_microphones() -> CmdResult<Vec<InputDevice>> {
    blocking(recorder::input_devices).await
}

/// Show the level of `device` (or the chosen microphone) as `microphone-level` events, without
/// recording; resolves with the device's name.
#[tauri::command]
#[specta::specta]
pub async fn start_microphone_check(
    state: State<'_, AppState>,
    device: Option<String>,
) -> CmdResult<String> {
    let microphone = state.microphone.clone();
    super::blocking_cmd(move || microphone.start_check(device)).await
}

/// End the microphone check (resolves once the device is closed).
#[tauri::command]
#[specta::specta]
pub async fn stop_microphone_check(state: State<'_, AppState>) -> CmdResult<()> {
    let microphone = state.microphone.clone();
    super::blocking_cmd(move || {
        microphone.stop_check();
        Ok(())
    })
    .await
}

/// Start dictating from `device` (or the microphone chosen in Settings, or the default).
#[tauri::command]
#[specta::specta]
pub async fn start_dictation(state: State<'_, AppState>, device: Option<String>) -> CmdResult<()> {
    let microphone = state.microphone.clone();
    super::blocking_cmd(move || microphone.start_dictation(device)).await
}

/// Load whisper and the voice activity detector now if they are not loaded: the Record button
/// asks when it is first focused or pointed at. Loading takes about 0.2 s (`load_ears` in the
/// harness), about the time from pointing at the button to pressing it, so the first dictation
/// does not wait, and their memory (up to ~115 MiB) stays free until then. A failure is left
/// for Record to report.
#[tauri::command]
#[specta::specta]
pub async fn prefetch_dictation(state: State<'_, AppState>) -> CmdResult<()> {
    let microphone = state.microphone.clone();
    blocking(move || microphone.mics().ears().map(drop)).await
}

/// Stop dictating; resolves with what it became, by Settings → After dictation: a draft, or a
/// memory, typed or not (also announced as a `dictation-state` event).
#[tauri::command]
#[specta::specta]
pub async fn stop_dictation(state: State<'_, AppState>) -> CmdResult<DictationState> {
    let microphone = state.microphone.clone();
    super::blocking_cmd(move || microphone.stop_dictation()).await
}

/// Dictations not yet saved, oldest first.
#[tauri::command]
#[specta::specta]
pub async fn list_drafts(state: State<'_, AppState>) -> CmdResult<Vec<Draft>> {
    let dictation = state.dictation.clone();
    blocking(move || Ok(dictation.drafts())).await
}

/// Save a draft, with the user's edit of its text, as a memory. For a transcribed file,
/// `keep_file` copies the file into the recordings folder as the memory's audio.
#[tauri::command]
#[specta::specta]
pub async fn save_draft(
    state: State<'_, AppState>,
    id: String,
    text: String,
    keep_file: bool,
) -> CmdResult<Memory> {
    let (dictation, store, scope) = (
        state.dictation.clone(),
        state.store.clone(),
        state.scope.clone(),
    );
    blocking(move || dictation.save_with(&id, &text, &store, &scope, "", keep_file)).await
}

/// Throw a draft and its recording away.
#[tauri::command]
#[specta::specta]
pub async fn discard_draft(state: State<'_, AppState>, id: String) -> CmdResult<()> {
    let dictation = state.dictation.clone();
    blocking(move || dictation.discard(&id)).await
}

/// Transcribe a draft's recording again (after a failure).
#[tauri::command]
#[specta::specta]
pub async fn retry_draft(state: State<'_, AppState>, id: String) -> CmdResult<Draft> {
    let (microphone, dictation) = (state.microphone.clone(), state.dictation.clone());
    blocking(move || dictation.retry(&id, &microphone.mics().ears()?)).await
}
