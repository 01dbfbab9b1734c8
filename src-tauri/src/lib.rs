//! Umwelt's desktop shell: it opens the user's memory file, registers the commands and shows the
//! window. Everything it does is a call into the `umwelt` engine.
//!
//! | file | what it holds |
//! |---|---|
//! | `commands/` | the `#[tauri::command]`s the web view calls: `memories.rs`, `dictation.rs`, `voice.rs`, `perf.rs` |
//! | `dictating.rs` | one live dictation at a time, its events (state, text heard, level) |
//! | `shortcut.rs` | the global dictation shortcut (toggle or push-to-talk) |
//! | `perf.rs` | the dashboard's own logic: one run at a time, cancel, keep the run |
//! | `state.rs` | what the app holds while it runs |
//! | `error.rs` | the error type that crosses into the web view |
//! | `events.rs` | the names of the events the shell emits to the web view |
//! | `bindings.rs` | TypeScript types generated from the Rust ones |

pub mod bindings;
pub mod commands;
pub mod dictating;
pub mod error;
pub mod events;
pub mod mic_check;
pub mod perf;
pub mod shortcut;
pub mod state;

use tauri::{Emitter, Manager};

/// Register the commands on a builder of any runtime (the mock one in tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    use commands::{dictation, memories, perf, voice};
    builder.invoke_handler(tauri::generate_handler![
        memories::list_memories,
        memories::remember,
        memories::recall,
        memories::delete_memory,
        dictation::list_microphones,
        dictation::start_microphone_check,
        dictation::stop_microphone_check,
        dictation::start_dictation,
        dictation::stop_dictation,
        dictation::list_drafts,
        dictation::save_draft,
        dictation::discard_draft,
        dictation::retry_draft,
        perf::bench_scenarios,
        perf::machine,
        perf::run_bench,
        perf::cancel_bench,
        perf::list_runs,
        perf::get_run,
        perf::delete_run,
        perf::compare_runs,
        perf::import_run,
        perf::export_run,
        perf::save_run,
        perf::real_timings,
        voice::list_voices,
        voice::list_speakers,
        voice::get_settings,
        voice::save_settings,
        voice::speak,
        voice::stop_speaking,
    ])
}

/// Run the desktop app.
pub fn run() {
    with_commands(tauri::Builder::default())
        .setup(|app| {
            let started = std::time::Instant::now();
            let state = state::AppState::open(umwelt::paths::data_dir())?;
            let _ = state.runs.record(
                "startup",
                umwelt::clock::now_ms(),
                started.elapsed().as_secs_f64() * 1e3,
            );
            let (handle, handle2) = (app.handle().clone(), app.handle().clone());
            state.warm_up(
                move |p| {
                    let _ = handle.emit(events::REEMBED_PROGRESS, p);
                },
                move |r| {
                    let _ = handle2.emit(events::RECOVERED, r);
                },
            );
            let settings = state
                .settings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            state.unload_when_idle();
            app.manage(state);
            app.handle().plugin(shortcut::plugin())?;
            if let Err(e) = shortcut::apply(app.handle(), &settings) {
                eprintln!("umwelt: {e}");
            }
            Ok(())
        })
        .run(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("Umwelt could not start: {e}");
            std::process::exit(1);
        });
}
