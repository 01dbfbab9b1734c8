//! Importing files and folders of notes: `.md` and `.txt` (one note each), and Umwelt's own JSON
//! exports. Every note is read and checked first; what cannot be a note is skipped with the
//! reason; then all the notes are written in one transaction ([`super::write_all`]), so a failed
//! import leaves nothing half-imported.
//!
//! A folder is walked without following the links inside it (a link to `.` would loop), at most
//! [`MAX_DEPTH`] folders deep, checking Cancel as it goes; an entry it cannot read (a dangling
//! link, an unreadable subfolder, a FIFO or a device) is skipped and reported, never the end of
//! the import. Only regular files are read, each through a limit, and all of them together
//! through [`MAX_IMPORT_BYTES`].

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{json, markdown, write_all_with, ExportedMemory, Work};
use crate::error::{Error, Result};
use crate::store::{Store, DEFAULT_SCOPE, MAX_TEXT_BYTES};

/// Folders below a chosen folder that an import goes into.
pub const MAX_DEPTH: usize = 32;
/// The most one Markdown or text file may hold (a note is at most [`MAX_TEXT_BYTES`] of text;
/// front matter and spaces come on top).
const MAX_NOTE_FILE: u64 = 4 * MAX_TEXT_BYTES as u64;
/// The most one JSON export may hold.
pub const MAX_JSON_FILE: u64 = 256 << 20;
/// The most an import reads from all its files together.
pub const MAX_IMPORT_BYTES: u64 = 1 << 30;

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ImportReport {
    /// New memories, in the order read.
    pub imported: Vec<i64>,
    /// Files, folders and memories that were not imported, each with the reason.
    pub skipped: Vec<Skipped>,
    /// Recordings that imported notes named but that were not linked to them (outside Umwelt's
    /// recordings folder, or already another memory's): the note came in without its recording.
    pub unlinked: Vec<Skipped>,
}

/// A file (or a memory in one) that was not imported, and why.
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
    let mut report = ImportReport::default();
    let mut walk = Walk {
        files: Vec::new(),
        skipped: &mut report.skipped,
        visited: HashSet::new(),
        work,
    };
    for p in paths {
        walk.chosen(p)?;
    }
    let files = std::mem::take(&mut walk.files);
    let mut notes: Vec<ExportedMemory> = Vec::new();
    let now = crate::clock::now_ms();
    let mut budget = MAX_IMPORT_BYTES;
    for f in files {
        work.check_cancel()?;
        let shown = f.display().to_string();
        match read_note_file(&f, scope, now, &mut budget) {
            Ok(found) => {
                for (i, m) in found.into_iter().enumerate() {
                    match m {
                        Ok(m) => notes.push(m),
                        Err(why) => report.skipped.push(Skipped {
                            path: format!("{shown} (memory {})", i + 1),
                            why,
                        }),
                    }
                }
            }
            Err(why) => report.skipped.push(Skipped { path: shown, why }),
        }
    }
    report.unlinked = unlink_foreign_recordings(store, &mut notes)?;
    report.imported = write_all_with(store, &notes, work)?;
    Ok(report)
}

/// Leave out every recording a note names that is not Umwelt's to link: outside the recordings
/// folder, a dictation's draft, already another memory's, or named twice in this import. Returns what was left out.
fn unlink_foreign_recordings(store: &Store, notes: &mut [ExportedMemory]) -> Result<Vec<Skipped>> {
    let mut unlinked = Vec::new();
    let mut seen = HashSet::new();
    for m in notes.iter_mut() {
        let Some(audio) = m.audio_path.take() else {
            continue;
        };
        let why = if !store.is_recording_path(&audio) {
            Some(format!(
                "not in Umwelt's recordings folder ({}): the note is imported without it",
                store.recordings_dir().display()
            ))
        } else if crate::speech::dictation::is_a_drafts_file(std::path::Path::new(&audio)) {
            Some("a dictation's draft file, not a memory's recording: the note is imported without it".into())
        } else if let Some(id) = store.memory_with_audio(&audio)? {
            Some(format!(
                "already memory {id}'s recording: the note is imported without it"
            ))
        } else if !seen.insert(audio.clone()) {
            Some("named by another note of this import: the first one keeps it".into())
        } else {
            None
        };
        match why {
            Some(why) => unlinked.push(Skipped { path: audio, why }),
            None => m.audio_path = Some(audio),
        }
    }
    Ok(unlinked)
}

/// The files an import will read, found under the paths the user chose.
struct Walk<'a, 'w> {
    files: Vec<PathBuf>,
    skipped: &'a mut Vec<Skipped>,
    /// Folders already read, by (device, inode): a folder reached twice is read once.
    visited: HashSet<(u64, u64)>,
    work: &'a Work<'w>,
}

impl Walk<'_, '_> {
    fn skip(&mut self, path: &Path, why: impl Into<String>) {
        self.skipped.push(Skipped {
            path: path.display().to_string(),
            why: why.into(),
        });
    }

    /// A path the user chose: a link there is followed (they chose it), and one that cannot be
    /// read at all is an error, since nothing of what they asked for could be imported.
    fn chosen(&mut self, path: &Path) -> Result<()> {
        let meta =
            std::fs::metadata(path).map_err(Error::io(format!("reading {}", path.display())))?;
        self.entry(path, &meta, 0)
    }

    fn entry(&mut self, path: &Path, meta: &std::fs::Metadata, depth: usize) -> Result<()> {
        self.work.check_cancel()?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            self.skip(path, "a link: links inside a folder are not followed");
        } else if kind.is_dir() {
            self.folder(path, meta, depth)?;
        } else if kind.is_file() {
            self.files.push(path.to_path_buf());
        } else {
            self.skip(path, "not a regular file (a FIFO, a socket or a device)");
        }
        Ok(())
    }

    fn folder(&mut self, path: &Path, meta: &std::fs::Metadata, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            self.skip(
                path,
                format!("more than {MAX_DEPTH} folders deep: import it on its own"),
            );
            return Ok(());
        }
        if !self.visited.insert((meta.dev(), meta.ino())) {
            self.skip(path, "a folder already read (it is reached twice)");
            return Ok(());
        }
        let read = match std::fs::read_dir(path) {
            Ok(r) => r,
            Err(e) => {
                self.skip(path, format!("the folder could not be read: {e}"));
                return Ok(());
            }
        };
        let mut entries = Vec::new();
        for e in read {
            match e {
                Ok(e) => entries.push(e.path()),
                Err(e) => self.skip(path, format!("part of the folder could not be read: {e}")),
            }
        }
        // Hidden files and folders (.obsidian, .git) are not notes.
        entries.retain(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        });
        entries.sort();
        for e in entries {
            match std::fs::symlink_metadata(&e) {
                Ok(meta) => self.entry(&e, &meta, depth + 1)?,
                Err(err) => self.skip(&e, format!("could not be read: {err}")),
            }
        }
        Ok(())
    }
}

/// Read at most `limit` bytes of the regular file at `path` (a FIFO or a device swapped in
/// after the walk is refused, not read forever); more than `limit` is an error.
fn open_regular(path: &Path) -> std::result::Result<(std::fs::File, u64), String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("could not be read: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("could not be read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file (a FIFO, a socket or a device)".into());
    }
    Ok((file, meta.len()))
}

/// Counts what a reader has given.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

fn read_regular(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, String> {
    let (file, len) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(len.min(limit) as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("could not be read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

fn too_large(limit: u64) -> String {
    if limit >= MAX_JSON_FILE {
        format!(
            "too large: an import reads at most {} MiB of an export",
            limit >> 20
        )
    } else {
        format!(
            "too large for a note: a memory holds at most {} KiB",
            MAX_TEXT_BYTES / 1024
        )
    }
}

/// The notes in one file (each checked: a bad one is its reason), or why the file is skipped.
/// `budget` is what the import may still read, and shrinks by what this file held.
fn read_note_file(
    path: &Path,
    scope: &str,
    now: i64,
    budget: &mut u64,
) -> std::result::Result<Vec<std::result::Result<ExportedMemory, String>>, String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "md" | "markdown" | "txt" | "json") {
        return Err("not a note: only .md, .txt and Umwelt's .json exports are imported".into());
    }
    let limit = if ext == "json" {
        MAX_JSON_FILE
    } else {
        MAX_NOTE_FILE
    };
    if *budget == 0 {
        return Err(format!(
            "the import has read {} MiB already: import the rest separately",
            MAX_IMPORT_BYTES >> 20
        ));
    }
    let cap = limit.min(*budget);
    let too_much = |why: String| {
        if limit > *budget && why.starts_with("too large") {
            format!(
                "the import would read more than {} MiB: import the rest separately",
                MAX_IMPORT_BYTES >> 20
            )
        } else {
            why
        }
    };
    if ext == "json" {
        // Parsed as it is read, never held whole: one memory at a time (json.rs).
        let (file, _) = open_regular(path)?;
        let mut counted = Counted {
            inner: file.take(cap + 1),
            read: 0,
        };
        let memories = json::read_export(&mut counted);
        if counted.read > cap {
            return Err(too_much(too_large(limit)));
        }
        *budget -= counted.read;
        return memories.map_err(|e| e.to_string());
    }
    let bytes = read_regular(path, cap).map_err(too_much)?;
    *budget -= bytes.len() as u64;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        format!(
            "not UTF-8 text (a byte at {} is not); save it as UTF-8 and import it again",
            e.valid_up_to()
        )
    })?;
    let note = markdown::parse(text);
    let modified = std::fs::metadata(path)
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64);
    let m = ExportedMemory {
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
    };
    json::check(&m)?;
    Ok(vec![Ok(m)])
}
