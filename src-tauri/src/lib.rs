//! Umwelt's desktop shell: it opens the user's memory file, registers the commands and shows the
//! window. Everything it does is a call into the `umwelt` engine.
//!
//! | file | what it holds |
//! |---|---|
//! | `commands/` | the `#[tauri::command]`s the web view calls: `memories.rs`, `dictation.rs`, `voice.rs`, `settings.rs`, `dashboard.rs` |
//! | `managers/` | one owner per resource: the microphone, the speaker, the speech models, the benchmark run |
//! | `shortcut.rs` | the global dictation shortcut (toggle or push-to-talk) |
//! | `state.rs` | what the app holds while it runs |
//! | `error.rs` | the error type that crosses into the web view |
//! | `events.rs` | the events the shell emits to the web view, and how managers send them |
//! | `ipc.rs` | the IPC surface in one list: every command and event |
//! | `bindings.rs` | `ui/src/bindings.ts` made from `ipc.rs`, and the test that keeps it current |

pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod ipc;
pub mod managers;
pub mod shortcut;
pub mod state;

use tauri::Manager;
use umwelt::bench::TimingKind;
use umwelt::clock::now_ms;

/// Register the commands on a builder of any runtime (the mock one in tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(ipc::surface::<R>().invoke_handler())
}

/// Run the desktop app.
pub fn run() {
    let app = with_commands(tauri::Builder::default())
        .setup(|app| {
            let started = std::time::Instant::now();
            let state = state::AppState::open(umwelt::paths::data_dir())?;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            if let Err(e) = state.runs.record(TimingKind::Startup, now_ms(), ms) {
                eprintln!("umwelt: the start-up time was not recorded: {e}");
            }
            state.events.bind(app.handle().clone());
            managers::models::warm_up(&state);
            state.speech_models.unload_when_idle(state.settings.clone());
            app.handle().plugin(shortcut::plugin())?;
            state.shortcut.bind(app.handle());
            let keys = state
                .settings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .shortcut
                .clone();
            if let Err(e) = state.shortcut.apply(&keys) {
                eprintln!("umwelt: {e}");
            }
            app.manage(state);
            Ok(())
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("Umwelt could not start: {e}");
            std::process::exit(1);
        });
    app.run(|app, event| on_event(app, &event));
}

/// What the app does on its event loop's own events: when the window closes and when the app
/// exits, the history and turn log still queued in the store's journal are written. (Tauri
/// leaves through `process::exit`, so no destructor would write them.)
pub fn on_event<R: tauri::Runtime>(app: &tauri::AppHandle<R>, event: &tauri::RunEvent) {
    let closing = matches!(
        event,
        tauri::RunEvent::ExitRequested { .. }
            | tauri::RunEvent::Exit
            | tauri::RunEvent::WindowEvent {
                event: tauri::WindowEvent::CloseRequested { .. } | tauri::WindowEvent::Destroyed,
                ..
            }
    );
    if !closing {
        return;
    }
    if let Some(state) = app.try_state::<state::AppState>() {
        if let Err(e) = state.store.flush() {
            eprintln!("umwelt: the last history entries could not be written: {e}");
        }
    }
}
