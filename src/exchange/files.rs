//! Importing files and folders of notes: `.md` and `.txt` (one note each), and Umwelt's own JSON
//! exports. Every note is read and checked first; what cannot be a note is skipped with the
//! reason; then all the notes are written in one transaction ([`super::write_all`]), so a failed
//! import leaves nothing half-imported.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{markdown, parse_export, write_all_with, ExportedMemory, Work};
use crate::error::{Error, Result};
use crate::store::{Store, DEFAULT_SCOPE, MAX_TEXT_BYTES};

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ImportReport {
    /// New memories, in the order read.
    pub imported: Vec<i64>,
    pub skipped: Vec<Skipped>,
}

/// A file that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

/// Import `paths` (files, or folders read recursively in name order) into `store`, notes
/// without a scope going to `scope`. An error (the embedder, the disk) writes nothing.
pub fn import_paths(store: &Store, paths: &[PathBuf], scope: &str) -> Result<ImportReport> {
    import_paths_with(store, paths, scope, &Work::default())
}

/// [`import_paths`], watched by `work` (progress after every batch; cancel writes nothing).
pub fn import_paths_with(
    store: &Store,
    paths: &[PathBuf],
    scope: &str,
    work: &Work,
) -> Result<ImportReport> {
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files)?;
    }
    let mut report = ImportReport::default();
    let mut notes: Vec<ExportedMemory> = Vec::new();
    let now = crate::clock::now_ms();
    for f in files {
        match read_note_file(&f, scope, now) {
            Ok(mut found) => notes.append(&mut found),
            Err(why) => report.skipped.push(Skipped {
                path: f.display().to_string(),
                why,
            }),
        }
    }
    report.imported = write_all_with(store, &notes, work)?;
    Ok(report)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(Error::io(format!("reading {}", path.display())))?;
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(Error::io(format!("reading the folder {}", path.display())))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                // Hidden files and folders (.obsidian, .git) are not notes.
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        entries.sort();
        for e in entries {
            collect(&e, out)?;
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// The notes in one file, or why it is skipped.
fn read_note_file(
    path: &Path,
    scope: &str,
    now: i64,
) -> std::result::Result<Vec<ExportedMemory>, String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "md" | "markdown" | "txt" | "json") {
        return Err("not a note: only .md, .txt and Umwelt's .json exports are imported".into());
    }
    let meta = std::fs::metadata(path).ok();
    let len = meta.as_ref().map_or(0, |m| m.len());
    let limit = if ext == "json" {
        1 << 30
    } else {
        4 * MAX_TEXT_BYTES as u64
    };
    if len > limit {
        return Err(format!(
            "too large ({} MB) for a note: a memory holds at most {} KiB",
            len / (1 << 20),
            MAX_TEXT_BYTES / 1024
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("could not be read: {e}"))?;
    if ext == "json" {
        return parse_export(&bytes)
            .map(|e| e.memories)
            .map_err(|e| e.to_string());
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        format!(
            "not UTF-8 text (a byte at {} is not); save it as UTF-8 and import it again",
            e.valid_up_to()
        )
    })?;
    let note = markdown::parse(text);
    if note.text.is_empty() {
        return Err("empty".into());
    }
    if note.text.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "{} KiB of text; a memory holds at most {} KiB: split it into several notes",
            note.text.len() / 1024,
            MAX_TEXT_BYTES / 1024
        ));
    }
    let modified = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64);
    Ok(vec![ExportedMemory {
        id: 0,
        text: note.text,
        scope: note
            .scope
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| {
                if scope.is_empty() {
                    DEFAULT_SCOPE.into()
                } else {
                    scope.into()
                }
            }),
        session: note.session.unwrap_or_default(),
        // The note's own date, else the file's, else now.
        created_at: note.created_at.or(modified).unwrap_or(now),
        source: note.source.unwrap_or_else(|| "imported".into()),
        audio_path: note.audio_path,
        versions: Vec::new(),
    }])
}
