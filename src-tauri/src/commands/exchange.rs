//! Memories in and out: importing files and folders of notes (with progress and Cancel),
//! exporting everything as Markdown (one file per memory) or lossless JSON, and transcribing an
//! audio file the user has into a draft.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::State;
use umwelt::exchange::{self, ImportProgress, ImportReport, Work};
use umwelt::speech::{Draft, FileProgress};

use super::{blocking, blocking_cmd};
use crate::error::CmdResult;
use crate::error::CommandError;
use crate::state::AppState;

/// Import `paths` (`.md`/`.txt` files, folders of them, Umwelt JSON exports): all of them or,
/// if anything fails or the user cancels, none.
#[tauri::command]
#[specta::specta]
pub async fn import_notes(
    state: State<'_, AppState>,
    paths: Vec<String>,
    on_progress: Channel<ImportProgress>,
) -> CmdResult<ImportReport> {
    let (guard, cancel) = state.jobs.start()?;
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || {
        let _guard = guard;
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        let tell = |p: ImportProgress| {
            // The window may have gone: the import goes on.
            let _window_gone = on_progress.send(p);
        };
        let work = Work {
            progress: Some(&tell),
            cancel: Some(&cancel),
        };
        exchange::import_paths_with(&store, &paths, &scope, &work)
    })
    .await
}

/// How memories are exported.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportAs {
    /// One Markdown file per memory, with front matter, in a folder (Obsidian opens it as is).
    Markdown,
    /// One lossless JSON file: importing it gives back the same memories.
    Json,
}

/// What an export wrote.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Exported {
    pub path: String,
    pub memories: u32,
}

/// Export every memory to `destination` (a folder for Markdown, a file for JSON). A file
/// already there is an error of kind `exists` unless `overwrite` says the user confirmed that
/// it may be replaced. Exports are plain text by the user's choice: a file to take elsewhere.
#[tauri::command]
#[specta::specta]
pub async fn export_memories(
    state: State<'_, AppState>,
    format: ExportAs,
    destination: String,
    overwrite: bool,
) -> CmdResult<Exported> {
    let (store, forgetting) = (state.store.clone(), state.forgetting.clone());
    blocking(move || {
        let dest = PathBuf::from(destination.trim());
        if dest.as_os_str().is_empty() {
            return Err(umwelt::Error::InvalidInput(
                "say where the export goes: a folder for Markdown, a file for JSON".into(),
            ));
        }
        let mut e = exchange::export(&store)?;
        // What the user deleted is gone from the export too, even within its Undo time.
        e.memories.retain(|m| !forgetting.is_waiting(m.id));
        let overwrite = if overwrite {
            exchange::Overwrite::Yes
        } else {
            exchange::Overwrite::No
        };
        match format {
            ExportAs::Markdown => exchange::write_markdown(&e, &dest, overwrite)?,
            ExportAs::Json => exchange::write_json(&e, &dest, overwrite)?,
        }
        Ok(Exported {
            path: dest.display().to_string(),
            memories: e.memories.len() as u32,
        })
    })
    .await
}

/// Where an export goes unless the user says otherwise: a dated name in Downloads (or the
/// home folder).
#[tauri::command]
#[specta::specta]
pub fn default_export_path(format: ExportAs) -> String {
    let dir = dirs::download_dir()
        .or_else(dirs::home_dir)
        .unwrap_or_else(umwelt::paths::data_dir);
    let date = umwelt::exchange::markdown::iso8601(umwelt::clock::now_ms());
    let day = date.get(..10).unwrap_or("export");
    let name = match format {
        ExportAs::Markdown => format!("Umwelt {day}"),
        ExportAs::Json => format!("umwelt-{day}.json"),
    };
    dir.join(name).display().to_string()
}

/// The audio file extensions a transcription accepts (for the file picker).
#[tauri::command]
#[specta::specta]
pub fn audio_extensions() -> Vec<String> {
    umwelt::speech::file::EXTENSIONS
        .iter()
        .map(|e| e.to_string())
        .collect()
}

/// Transcribe an audio file into a draft, with a time for each segment; progress after every
/// stretch of at most 30 s. Cancel (`cancel_job`) stops it and makes no draft.
#[tauri::command]
#[specta::specta]
pub async fn transcribe_file(
    state: State<'_, AppState>,
    path: String,
    on_progress: Channel<FileProgress>,
) -> CmdResult<Draft> {
    let (guard, cancel) = state.jobs.start()?;
    let (microphone, dictation) = (state.microphone.clone(), state.dictation.clone());
    blocking_cmd(move || {
        let _guard = guard;
        let ears = microphone.mics().ears()?;
        dictation
            .draft_from_file(std::path::Path::new(&path), &ears, cancel, |p| {
                let _window_gone = on_progress.send(p);
            })
            .map_err(CommandError::from)
    })
    .await
}

/// Stop the running import or transcription.
#[tauri::command]
#[specta::specta]
pub fn cancel_job(state: State<'_, AppState>) {
    state.jobs.cancel();
}
