//! Umwelt's desktop shell: it opens the user's memory file, registers the commands and shows the
//! window. Everything it does is a call into the `umwelt` engine.
//!
//! | file | what it holds |
//! |---|---|
//! | `commands/` | the `#[tauri::command]`s the web view calls: `memories.rs`, `dictation.rs`, `voice.rs`, `settings.rs`, `dashboard.rs`, `exchange.rs` (import, export, file transcription), `holders.rs` (who holds what, the demo town) |
//! | `managers/` | one owner per resource: the microphone, the speaker, the speech models, the benchmark run, the jobs slot, forgetting with Undo (`forgetting.rs`, one `umwelt-forget` thread a waiting deletion), the demo town (`town.rs`) |
//! | `start.rs` | starting the app once the memory file is open: the state bound to the running app, the global shortcut's plugin (its handler above the state) |
//! | `unlock.rs` | the app while its memory file waits for a passphrase |
//! | `warm_up.rs` | the work after start-up (vectors, re-embedding, crash recovery, whisper for the shortcut, the voice), on the `umwelt-warm-up` thread |
//! | `shortcut.rs` | the global dictation shortcut (toggle or push-to-talk): registering it; the plugin's handler is built in `start.rs`, above the state |
//! | `single_instance.rs` | one app per data folder: a second launch brings the first's window forward (`umwelt-instance` thread) |
//! | `state.rs` | what the app holds while it runs |
//! | `error.rs` | the error type that crosses into the web view |
//! | `events.rs` | the events the shell emits to the web view, and how managers send them |
//! | `logging.rs` | the rotating log file in the data folder |
//! | `rendering.rs` | how the web view draws: no compositing without a GPU render node |
//! | `ipc.rs` | the IPC surface in one list: every command and event |
//! | `bindings.rs` | `ui/src/bindings.ts` made from `ipc.rs`, and the test that keeps it current |
//!
//! Imports go one way: `lib.rs` → `commands/` → `start.rs` → `warm_up.rs` → `state.rs` → `managers/`,
//! `shortcut.rs`, `events.rs`; nothing below `state.rs` imports `AppState`.

pub mod bindings;
pub mod commands;
pub mod error;
pub mod events;
pub mod ipc;
pub mod logging;
pub mod managers;
pub mod rendering;
pub mod shortcut;
pub mod single_instance;
pub mod start;
pub mod state;
pub mod unlock;
pub mod warm_up;

use tauri::Manager;

/// Register the commands on a builder of any runtime (the mock one in tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.invoke_handler(ipc::surface::<R>().invoke_handler())
}

/// Run the desktop app.
pub fn run() {
    // The dashboard's memory scenarios start the app again to measure a fresh process: it
    // measures and exits before any window.
    umwelt::bench::memory_probe::run_if_asked();
    // What the app creates (the memory file, recordings, drafts, logs, exports) is the user's
    // alone: 0600, folders 0700.
    umwelt::paths::private_umask();
    rendering::choose();
    let data_dir = umwelt::paths::data_dir();
    let instance = match single_instance::claim(&data_dir) {
        Ok(single_instance::Instance::First(first)) => Some(first),
        Ok(single_instance::Instance::AlreadyRunning { unreachable: None }) => {
            println!("Umwelt is already running; its window was brought to the front.");
            return;
        }
        Ok(single_instance::Instance::AlreadyRunning {
            unreachable: Some(e),
        }) => {
            // The lock says another Umwelt has this folder: two would fight over it.
            eprintln!(
                "Umwelt is already running on {}, but its window could not be brought to the \
                 front ({e}); switch to it, or end it before starting again.",
                data_dir.display()
            );
            std::process::exit(1);
        }
        Err(e) => {
            // Not fatal: without the lock the store's own locking still keeps the file whole.
            eprintln!("umwelt: could not check for another running Umwelt ({e}); starting anyway");
            None
        }
    };
    let app = with_commands(tauri::Builder::default())
        .setup(move |app| {
            let started = std::time::Instant::now();
            logging::init(&logging::log_dir(&data_dir));
            if let Some(first) = instance {
                let handle = app.handle().clone();
                let listening = first.listen(move || {
                    if let Some(w) = handle.get_webview_window("main") {
                        let shown = w
                            .unminimize()
                            .and_then(|_| w.show())
                            .and_then(|_| w.set_focus());
                        if let Err(e) = shown {
                            tracing::warn!("bringing the window to the front: {e}");
                        }
                    }
                });
                if let Err(e) = listening {
                    tracing::warn!("a second launch will not find this one ({e})");
                }
                // The lock lives as long as the app (the process ends in `process::exit`).
                app.manage(first);
            }
            let opening = state::AppState::open(data_dir.clone(), None).inspect_err(|e| {
                tracing::error!("Umwelt could not open its data: {e}");
            })?;
            let handle = app.handle().clone();
            let begin: unlock::Begin =
                Box::new(move |state, started| start::begin(&handle, state, started));
            match opening {
                state::Opening::Ready(state) => {
                    begin(*state, started)?;
                    app.manage(unlock::Unlocking::new(data_dir, None, started, begin));
                }
                // The window asks for the passphrase first (commands/privacy.rs).
                state::Opening::Ask(ask) => {
                    app.manage(unlock::Unlocking::new(data_dir, Some(ask), started, begin));
                }
            }
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
/// exits, deletions waiting out their Undo time are carried out and the history and turn log
/// still queued in the store's journal are written. (Tauri
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
    if let tauri::RunEvent::WindowEvent {
        event: tauri::WindowEvent::Focused(focused),
        ..
    } = event
    {
        // After dictation types into the focused app, never into Umwelt's own window.
        if let Some(state) = app.try_state::<state::AppState>() {
            state.desktop.set_focused(*focused);
        }
    }
    if !closing {
        return;
    }
    if let Some(state) = app.try_state::<state::AppState>() {
        // Deletions still waiting for their Undo time are carried out, not dropped.
        state.forgetting.flush();
        if let Err(e) = state.store.flush() {
            tracing::warn!("the last history entries could not be written: {e}");
        }
    }
}
