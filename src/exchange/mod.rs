//! Memories in and out of Umwelt: a lossless JSON export (and its import), a folder of Markdown
//! files with front matter that note apps such as Obsidian open as it is, and the import of
//! folders of `.md` / `.txt` notes.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the export format ([`Export`]), [`export`], [`write_json`], [`write_markdown`], and [`write_all`]: every imported note embedded in batches, then written in one transaction (all or nothing) |
//! | `markdown.rs` | one Markdown file per memory, and reading one back (front matter, BOM, CRLF) |
//! | `files.rs` | [`import_paths`]: files and folders of notes (no links followed, a depth cap, Cancel while walking, every file read through a limit), what was skipped and why |
//! | `json.rs` | reading a JSON export as a stream, each memory checked before anything is embedded |
//! | `write_file.rs` | where an export is written: a private temporary file beside it, never over an existing file unless the user confirmed it |

mod files;
mod json;
pub mod markdown;
mod write_file;

pub use files::{
    import_paths, import_paths_with, ImportReport, Skipped, MAX_DEPTH, MAX_IMPORT_BYTES,
    MAX_JSON_FILE,
};
pub use json::{check, parse_export, read_export, MAX_NAME_BYTES, MAX_SOURCE_BYTES, MAX_VERSIONS};
pub use write_file::{write_new_file, Overwrite};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{NewMemory, Store, Version};

/// The format name written into every JSON export.
pub const EXPORT_FORMAT: &str = "umwelt-export/1";
/// Notes embedded per batch on import.
const BATCH: usize = 32;

/// Everything a JSON export holds: every memory with its holder, session, times, source,
/// recording and earlier versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub format: String,
    /// When it was made (unix ms).
    pub exported_at: i64,
    pub memories: Vec<ExportedMemory>,
}

/// One memory in an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMemory {
    /// Its id in the file it came from (a new one is given on import).
    pub id: i64,
    pub text: String,
    /// The holder (scope) whose memory it is.
    pub scope: String,
    pub session: String,
    /// When it was made (unix ms).
    pub created_at: i64,
    pub source: String,
    pub audio_path: Option<String>,
    /// Earlier texts, oldest first.
    #[serde(default)]
    pub versions: Vec<Version>,
}

/// Every memory in `store`, as an [`Export`].
pub fn export(store: &Store) -> Result<Export> {
    let memories = store
        .all_memories()?
        .into_iter()
        .map(|m| {
            Ok(ExportedMemory {
                versions: store.versions(m.id)?,
                id: m.id,
                text: m.text,
                scope: m.scope,
                session: m.session,
                created_at: m.created_at,
                source: m.source,
                audio_path: m.audio_path,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Export {
        format: EXPORT_FORMAT.into(),
        exported_at: crate::clock::now_ms(),
        memories,
    })
}

/// Write `e` as one JSON file: a private temporary file renamed into place, never half a file,
/// and never over an existing one unless `overwrite` says the user confirmed it.
pub fn write_json(e: &Export, file: &std::path::Path, overwrite: Overwrite) -> Result<()> {
    write_new_file(
        file,
        &serde_json::to_vec_pretty(e).expect("an export serialises"),
        overwrite,
    )
}

/// Write `e` as one Markdown file per memory in `dir` (made if need be, private). A file of
/// the same name already there is an error unless `overwrite` says the user confirmed it; the
/// check comes before any file is written.
pub fn write_markdown(e: &Export, dir: &std::path::Path, overwrite: Overwrite) -> Result<()> {
    if dir.is_file() {
        return Err(Error::InvalidInput(format!(
            "{} is a file: a Markdown export goes into a folder",
            dir.display()
        )));
    }
    // A folder made for the export is private; a folder of the user's keeps its mode.
    if !dir.exists() {
        crate::paths::private_dir(dir)?;
    }
    let names: Vec<std::path::PathBuf> = e
        .memories
        .iter()
        .map(|m| dir.join(markdown::file_name(m)))
        .collect();
    if overwrite == Overwrite::No {
        if let Some(taken) = names.iter().find(|p| std::fs::symlink_metadata(p).is_ok()) {
            return Err(Error::Exists(taken.clone()));
        }
    }
    for (m, path) in e.memories.iter().zip(&names) {
        write_new_file(path, markdown::render(m).as_bytes(), overwrite)?;
    }
    Ok(())
}

/// Embed every memory (in batches, shortest first so a batch pads little) and write them all
/// in one transaction: all of them, or none if anything fails. Returns the new ids, in order.
pub fn write_all(store: &Store, memories: &[ExportedMemory]) -> Result<Vec<i64>> {
    write_all_with(store, memories, &Work::default())
}

/// How far an import has got: notes embedded of all the notes read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ImportProgress {
    pub done: u32,
    pub total: u32,
}

/// Who watches a long import: told after every batch, and able to stop it before anything is
/// written ([`crate::Error::Cancelled`]).
#[derive(Default)]
pub struct Work<'a> {
    pub progress: Option<&'a (dyn Fn(ImportProgress) + Sync)>,
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
}

impl Work<'_> {
    /// [`crate::Error::Cancelled`] once the user has asked to stop.
    pub(crate) fn check_cancel(&self) -> Result<()> {
        if self
            .cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(crate::Error::Cancelled);
        }
        Ok(())
    }

    fn tell(&self, done: usize, total: usize) -> Result<()> {
        if let Some(p) = self.progress {
            p(ImportProgress {
                done: done as u32,
                total: total as u32,
            });
        }
        if self
            .cancel
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(crate::Error::Cancelled);
        }
        Ok(())
    }
}

/// [`write_all`], watched by `work`.
pub fn write_all_with(store: &Store, memories: &[ExportedMemory], work: &Work) -> Result<Vec<i64>> {
    work.tell(0, memories.len())?;
    let embedder = store.embedder().get()?;
    let mut order: Vec<usize> = (0..memories.len()).collect();
    order.sort_by_key(|&i| memories[i].text.len());
    let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); memories.len()];
    let mut done = 0;
    for batch in order.chunks(BATCH) {
        let texts: Vec<&str> = batch.iter().map(|&i| memories[i].text.as_str()).collect();
        for (&i, v) in batch.iter().zip(embedder.embed(&texts)?) {
            vectors[i] = v;
        }
        done += batch.len();
        work.tell(done, memories.len())?;
    }
    let rows: Vec<(NewMemory, &[f32])> = memories
        .iter()
        .zip(&vectors)
        .map(|(m, v)| {
            (
                NewMemory {
                    scope: &m.scope,
                    session: &m.session,
                    text: &m.text,
                    created_at: Some(m.created_at),
                    source: Some(&m.source),
                    audio_path: m.audio_path.as_deref(),
                    embed_model: None,
                    versions: &m.versions,
                    unsaved: None,
                },
                v.as_slice(),
            )
        })
        .collect();
    store.remember_batch(&rows)
}
