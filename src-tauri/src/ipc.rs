//! The IPC surface in one list: every command and every event the web view can use. Tauri's
//! invoke handler and `ui/src/bindings.ts` (commands, their arguments and results, events and
//! every type they carry, in TypeScript) are both made from it, so a renamed command, argument
//! or field fails `npm run check` instead of reaching a user.

use tauri::Runtime;
use tauri_specta::{collect_commands, ErrorHandlingMode};

use crate::commands::{
    dashboard, dictation, exchange, holders, memories, privacy, settings, voice,
};

/// The commands and events, for any runtime (the mock one in tests).
pub fn surface<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(collect_commands![
            memories::list_memories,
            memories::count_memories,
            memories::get_memory,
            memories::remember,
            memories::edit_memory,
            memories::memory_versions,
            memories::restore_version,
            memories::recall,
            memories::search,
            memories::delete_memory,
            memories::undo_delete,
            memories::list_sessions,
            memories::session_log,
            memories::forget_session,
            memories::forget_everything,
            memories::undo_forget,
            holders::demo_town_ready,
            holders::load_demo_town,
            holders::list_holders,
            holders::list_entities,
            holders::holder_holdings,
            holders::entity_holdings,
            holders::who_holds,
            holders::search_claims,
            exchange::import_notes,
            exchange::export_memories,
            exchange::default_export_path,
            exchange::audio_extensions,
            exchange::transcribe_file,
            exchange::cancel_job,
            dictation::list_microphones,
            dictation::start_microphone_check,
            dictation::stop_microphone_check,
            dictation::prefetch_dictation,
            dictation::start_dictation,
            dictation::stop_dictation,
            dictation::list_drafts,
            dictation::save_draft,
            dictation::discard_draft,
            dictation::retry_draft,
            dashboard::bench_scenarios,
            dashboard::machine,
            dashboard::run_bench,
            dashboard::cancel_bench,
            dashboard::list_runs,
            dashboard::get_run,
            dashboard::delete_run,
            dashboard::compare_runs,
            dashboard::import_run,
            dashboard::export_run,
            dashboard::save_run,
            dashboard::real_timings,
            voice::list_voices,
            voice::list_speakers,
            voice::speak,
            voice::play_recording,
            voice::stop_speaking,
            settings::get_settings,
            settings::save_settings,
            settings::take_startup_note,
            settings::log_folder,
            settings::open_log_folder,
            settings::agent_setup,
            privacy::locked,
            privacy::unlock,
            privacy::privacy,
        ])
        .events(crate::events::all())
        // A rejected command throws its `CommandError`, as `invoke` does.
        .error_handling(ErrorHandlingMode::Throw)
        // Ids, times (Unix ms) and counts are integers below 2^53: plain numbers in JavaScript.
        .dangerously_cast_bigints_to_number()
        // Floats are plain numbers: the engine sends only finite ones (NaN would arrive as null).
        .semantic_types(
            specta_typescript::semantic::Configuration::empty().enable_lossless_floats(),
        )
        // One type per Rust type: what Rust sends and what it accepts have the same shape.
        .disable_serde_phases()
}
