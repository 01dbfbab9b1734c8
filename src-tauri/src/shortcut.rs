//! The global dictation shortcut (Tauri's global-shortcut plugin): toggle, or push-to-talk
//! (record while held). Registered at start-up and again whenever the settings change.

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_global_shortcut::{GlobalShortcut, GlobalShortcutExt, ShortcutState};
use umwelt::settings::{Settings, ShortcutMode};

use crate::dictating;
use crate::state::AppState;

/// The plugin, with the handler every registered shortcut calls.
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_global_shortcut::Builder::new()
        .with_handler(|app, _shortcut, event| {
            let mode = app
                .state::<AppState>()
                .settings
                .lock()
                .map(|s| s.shortcut_mode)
                .unwrap_or_default();
            match (mode, event.state()) {
                (ShortcutMode::Toggle, ShortcutState::Pressed) => dictating::toggle(app),
                (ShortcutMode::PushToTalk, ShortcutState::Pressed) => {
                    if !dictating::is_listening(app) {
                        dictating::toggle(app);
                    }
                }
                (ShortcutMode::PushToTalk, ShortcutState::Released) => {
                    if dictating::is_listening(app) {
                        dictating::stop_in_background(app);
                    }
                }
                _ => {}
            }
        })
        .build()
}

/// Register the shortcut the settings name (replacing any other). A shortcut that cannot be
/// parsed or is taken by another program is an error for the user; dictation still works from
/// the Record button.
pub fn apply<R: Runtime>(app: &AppHandle<R>, settings: &Settings) -> Result<(), String> {
    if app.try_state::<GlobalShortcut<R>>().is_none() {
        return Ok(()); // no plugin (tests on the mock runtime)
    }
    let gs = app.global_shortcut();
    let _ = gs.unregister_all();
    let keys = settings.shortcut.trim();
    if keys.is_empty() {
        return Ok(());
    }
    gs.register(keys).map_err(|e| {
        format!("the shortcut '{keys}' could not be registered ({e}); choose another in Settings")
    })
}
