//! The settings: voice, speed, speaker; microphone, speech model, vocabulary, shortcut, idle
//! unload; whether agents may write, and how their MCP client starts Umwelt. Validated and
//! written by the engine (`umwelt::settings`, `umwelt::mcp`).

use tauri::State;
use umwelt::settings::Settings;

use super::blocking;
use crate::error::{CmdResult, CommandError, ErrorKind};
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub fn get_settings(state: State<'_, AppState>) -> Settings {
    state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Validate, save and use new settings: a new speech model is loaded at the next dictation, a
/// new shortcut is registered at once (one another program holds is an error to show). The
/// shortcut is registered before anything is saved, so a refused shortcut is never saved; if the
/// save then fails, the old shortcut is registered again.
#[tauri::command]
#[specta::specta]
pub async fn save_settings(state: State<'_, AppState>, settings: Settings) -> CmdResult<Settings> {
    settings.validate()?;
    let (file, current) = (state.settings_file.clone(), state.settings.clone());
    let before = current.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let new_shortcut = settings.shortcut != before.shortcut;
    if new_shortcut {
        state
            .shortcut
            .apply(&settings.shortcut)
            .map_err(|e| CommandError::new(ErrorKind::Input, e))?;
    }
    let saved = blocking(move || {
        file.save(&settings)?;
        *current.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
        Ok(settings)
    })
    .await;
    let saved = match saved {
        Ok(s) => s,
        Err(e) => {
            if new_shortcut {
                if let Err(again) = state.shortcut.apply(&before.shortcut) {
                    tracing::warn!("{again}");
                }
            }
            return Err(e);
        }
    };
    if saved.speech_model != before.speech_model {
        state.speech_models.use_model(saved.speech_model);
    }
    Ok(saved)
}

/// What the app has to tell the user about its start (a damaged settings file that was reset),
/// once: the first call takes it.
#[tauri::command]
#[specta::specta]
pub fn take_startup_note(state: State<'_, AppState>) -> Option<String> {
    state
        .startup_note
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

/// Settings → Agents: how an agent's MCP client starts Umwelt's server (`umwelt-cli mcp`, found
/// beside this program as the package installs it).
#[tauri::command]
#[specta::specta]
pub fn agent_setup() -> umwelt::mcp::ClientSetup {
    umwelt::mcp::client_setup(std::env::current_exe().ok().as_deref())
}

/// The folder the log files are in, to show in Settings.
#[tauri::command]
#[specta::specta]
pub fn log_folder(state: State<'_, AppState>) -> String {
    state.log_dir.to_string_lossy().into_owned()
}

/// Open the log folder in the system's file manager.
#[tauri::command]
#[specta::specta]
pub fn open_log_folder(state: State<'_, AppState>) -> CmdResult<()> {
    let dir = &state.log_dir;
    umwelt::paths::private_dir(dir).map_err(|e| {
        CommandError::new(
            ErrorKind::Internal,
            format!("the log folder {} cannot be made: {e}", dir.display()),
        )
    })?;
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(dir)
        .spawn()
        .map(|mut child| {
            // Reaped when the opener exits (it hands the folder to the file manager and ends).
            std::thread::spawn(move || child.wait());
        })
        .map_err(|e| {
            tracing::warn!("opening the log folder with {opener}: {e}");
            CommandError::new(
                ErrorKind::Internal,
                format!(
                    "the file manager could not be opened ({e}); the logs are in {}",
                    dir.display()
                ),
            )
        })
}
