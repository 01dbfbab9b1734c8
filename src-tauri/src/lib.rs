//! Umwelt's desktop shell: it opens the user's memory file, registers the commands and shows the
//! window. Everything it does is a call into the `umwelt` engine.
//!
//! | file | what it holds |
//! |---|---|
//! | `commands.rs` | the `#[tauri::command]`s the web view calls |
//! | `state.rs` | what the app holds while it runs |
//! | `error.rs` | the error type that crosses into the web view |
//! | `events.rs` | the names of the events the shell emits to the web view |
//! | `bindings.rs` | TypeScript types generated from the Rust ones |

pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod state;

use tauri::{Emitter, Manager};

/// Register the commands on a builder of any runtime (the mock one in tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(tauri::generate_handler![
        commands::list_memories,
        commands::remember,
        commands::recall,
        commands::delete_memory,
        commands::list_microphones,
        commands::start_recording,
        commands::stop_recording,
    ])
}

/// Run the desktop app.
pub fn run() {
    with_commands(tauri::Builder::default())
        .setup(|app| {
            let state = state::AppState::open(umwelt::paths::data_dir())?;
            let handle = app.handle().clone();
            state.warm_up(move |p| {
                let _ = handle.emit(events::REEMBED_PROGRESS, p);
            });
            app.manage(state);
            Ok(())
        })
        .run(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("Umwelt could not start: {e}");
            std::process::exit(1);
        });
}
