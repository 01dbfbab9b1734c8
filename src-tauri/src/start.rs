//! Starting the app once its memory file is open: at once from `lib.rs`'s setup, or after the
//! window's passphrase prompt opened it (`commands/privacy.rs`). It holds the [`AppState`]
//! and binds what needs the running app (events, the global shortcut, the file pickers), so it
//! lives above the state.

use std::time::Instant;

use tauri::{AppHandle, Manager, Runtime};
use umwelt::clock::now_ms;
use umwelt::perf_db::TimingKind;

use crate::state::AppState;
use crate::warm_up;

/// Bind `state` to the running app and start the work after start-up. `started` is when the
/// start began, for the start-up time the dashboard shows (a passphrase prompt's wait
/// included: it is what the user waited for).
pub fn begin<R: Runtime>(
    app: &AppHandle<R>,
    state: AppState,
    started: Instant,
) -> tauri::Result<()> {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    if let Err(e) = state.runs.record(TimingKind::Startup, now_ms(), ms) {
        tracing::warn!("the start-up time was not recorded: {e}");
    }
    state.events.bind(app.clone());
    warm_up::warm_up(&state);
    state.speech_models.unload_when_idle(state.settings.clone());
    app.plugin(shortcut_plugin())?;
    // The file and folder pickers (transcribe, import, export).
    app.plugin(tauri_plugin_dialog::init())?;
    state.shortcut.bind(app);
    let keys = state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .shortcut
        .clone();
    if let Err(e) = state.shortcut.apply(&keys) {
        tracing::warn!("{e}");
    }
    app.manage(state);
    Ok(())
}

/// The global-shortcut plugin, with the handler every registered shortcut calls: it starts
/// or stops a dictation through the app's state (built here, above the state, so that nothing
/// below `state.rs` imports it).
fn shortcut_plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_global_shortcut::Builder::new()
        .with_handler(|app, _shortcut, event| {
            let Some(state) = app.try_state::<AppState>() else {
                return;
            };
            let mode = state
                .settings
                .lock()
                .map(|s| s.shortcut_mode)
                .unwrap_or_default();
            let microphone = &state.microphone;
            match (mode, event.state()) {
                (
                    umwelt::settings::ShortcutMode::Toggle,
                    tauri_plugin_global_shortcut::ShortcutState::Pressed,
                ) => microphone.toggle(),
                (
                    umwelt::settings::ShortcutMode::PushToTalk,
                    tauri_plugin_global_shortcut::ShortcutState::Pressed,
                ) if !microphone.is_dictating() => microphone.toggle(),
                (
                    umwelt::settings::ShortcutMode::PushToTalk,
                    tauri_plugin_global_shortcut::ShortcutState::Released,
                ) if microphone.is_dictating() => microphone.stop_in_background(),
                _ => {}
            }
        })
        .build()
}
