//! From the microphone to a memory, never losing a word:
//!
//! 1. [`DictationDrafts::start`]: the recorder spools audio to `recordings/<id>.spool` every quarter
//!    second and hands each chunk to the listener, which transcribes it segment by segment
//!    ([`super::live`]) and reports partial text as it goes.
//! 2. [`DictationDrafts::stop`]: the last segment is transcribed, the spool becomes
//!    `recordings/<id>.wav`, and the text becomes a **draft** (`recordings/<id>.draft.json`).
//!    A failed transcription still makes a draft: no text, the reason, and the audio to retry.
//!    The order keeps a copy on disk at every instant: the WAV is written and synced, then the
//!    draft, then the folder, and only then is the spool removed. If the disk is full the WAV
//!    cannot be written: the draft keeps the spool as its recording, and Retry makes the WAV.
//! 3. [`DictationDrafts::save`]: the user's (possibly edited) text becomes a memory, durably
//!    committed, and only then does the draft go. A recording becomes at most one memory, so a
//!    save repeated (after a crash, or twice at once) finds the memory the first one made.
//!
//! Whatever a crash or a kill left is put right at the next start ([`DictationDrafts::recover`]): a
//! spool becomes a draft, a WAV with neither draft nor memory becomes a draft, a draft already
//! saved goes, a half-discarded draft is discarded, half-written temporaries go. Each step is a
//! named [`crate::crashpoint`], and `tests/it/crash_sweep.rs` kills the process at each.
//!
//! In the app a draft is also a draft of the user's holder in the memory file
//! ([`DictationDrafts::keeping_drafts_in`], `store/holdings/unsaved.rs`): each time the draft file is
//! written, its text is put in the draft named after the recording; saving merges it as the
//! memory in the memory's own transaction, discarding discards it. The files stay the record:
//! the memory file's copy is made again from them when it is missing or stale.
//!
//! Long recordings are read, resampled, written and transcribed a block at a time: memory does
//! not grow with their length.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`DictationDrafts`]: the recordings folder and the drafts in it (read, listed, written, mirrored into the memory file) |
//! | `draft.rs` | what a [`Draft`] is |
//! | `from_microphone.rs` | a dictation from the microphone to a draft: start, stop, the spool made a WAV |
//! | `from_file.rs` | an audio file the user has made a draft; Retry |
//! | `save.rs` | a draft saved as a memory, or discarded |
//! | `after_stop.rs` | what a stopped dictation becomes (Settings → After dictation): kept, typed into the focused app, saved |
//! | `recover.rs` | what a crash left, put right at the next start |

mod after_stop;
mod draft;
mod from_file;
mod from_microphone;
mod recover;
mod save;

pub use after_stop::{AfterStop, Elsewhere};
pub use draft::{Draft, SOURCE_DICTATED, SOURCE_TRANSCRIBED};
pub use from_microphone::{ClosedDictation, LiveDictation};
pub use recover::Recovery;

/// Whether `path` is one of a dictation's own files rather than a saved memory's recording: a
/// spool, a draft, a file being written, or the recording of a dictation still waiting as a
/// draft (`<id>.<ext>` beside `<id>.draft.json`). An imported note may link none of them:
/// deleting the note would delete the draft's audio.
pub fn is_a_drafts_file(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    const DRAFTS: [&str; 5] = [
        ".spool",
        ".spool.damaged",
        ".draft.json",
        ".draft.discarded",
        ".part",
    ];
    if DRAFTS.iter().any(|s| name.ends_with(s)) {
        return true;
    }
    let id = name.split_once('.').map_or(name, |(id, _)| id);
    path.with_file_name(format!("{id}.draft.json")).exists()
}

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::audio::{StreamResampler, WavSink, SAMPLE_RATE};
use crate::error::{catch_panic, Error, Result};
use crate::speech::file::{self, FileProgress};
use crate::speech::live::{self, Ears, Heard};
use crate::speech::spool::{self, SpoolReader};
use crate::speech::transcriber::TimedText;
use crate::speech::{Recorder, Recording};
use crate::store::{Memory, NewMemory, Store};

/// What a panic while transcribing was doing (the draft's problem says it).
const HEARING: &str = "transcribing the recording";

/// Where recordings and drafts are kept, and the way from one to a memory.
pub struct DictationDrafts {
    recordings_dir: PathBuf,
    /// What recordings, spools and drafts are sealed with (beside an encrypted memory file).
    seal: Option<crate::sealed::Seal>,
    /// Held while a draft is saved, discarded, or written back by a retry: a retry that ends
    /// after a save never brings the saved draft back.
    drafts: std::sync::Mutex<()>,
    /// Where each draft is also kept as a draft of the user's holder, if anywhere.
    notebook: Option<Notebook>,
}

/// The memory file and the holder whose unsaved dictations the drafts are.
struct Notebook {
    store: Arc<Store>,
    holder: String,
}

impl DictationDrafts {
    /// Drafts in `recordings_dir`, written plain (sealed with the tests' key under
    /// `UMWELT_TEST_ENCRYPTION=on`) until [`DictationDrafts::sealing_with`] says otherwise.
    pub fn new(recordings_dir: impl Into<PathBuf>) -> DictationDrafts {
        DictationDrafts {
            recordings_dir: recordings_dir.into(),
            seal: crate::sealed::Seal::for_tests().cloned(),
            drafts: std::sync::Mutex::new(()),
            notebook: None,
        }
    }
    /// Seal what is written from now on with `seal` (the memory file's [`Store::seal`]), or
    /// write it plain (`None`); files already written are read either way.
    pub fn sealing_with(mut self, seal: Option<crate::sealed::Seal>) -> DictationDrafts {
        self.seal = seal;
        self
    }
    /// The key recordings are sealed with, if any.
    pub fn seal(&self) -> Option<&crate::sealed::Seal> {
        self.seal.as_ref()
    }
    /// Keep every draft also as a draft of `holder` in `store`, so a read through it sees the
    /// notebook as it will be once the dictation is saved.
    pub fn keeping_drafts_in(
        mut self,
        store: Arc<Store>,
        holder: impl Into<String>,
    ) -> DictationDrafts {
        self.notebook = Some(Notebook {
            store,
            holder: holder.into(),
        });
        self
    }
    /// Put the draft's text in its draft of the user's holder. The draft file is already on
    /// disk, so a failure here loses nothing: the next start makes the copy again.
    fn mirror(&self, draft: &Draft) {
        if let Some(n) = &self.notebook {
            if let Err(e) = n
                .store
                .put_unsaved(&draft.id, &n.holder, &draft.text, draft.created_at)
            {
                tracing::warn!(
                    "the draft {} is on disk but not yet in the memory file: {e}",
                    draft.id
                );
            }
        }
    }
    /// Discard the draft's copy in the memory file (a failure is put right at the next start).
    fn unmirror(&self, id: &str) {
        if let Some(n) = &self.notebook {
            if let Err(e) = n.store.drop_unsaved(id) {
                tracing::warn!("the discarded draft {id} is still in the memory file: {e}");
            }
        }
    }
    pub fn recordings_dir(&self) -> &Path {
        &self.recordings_dir
    }
    /// A WAV recording, sealed or plain, open for reading.
    fn wav_reader(
        &self,
        wav: &Path,
    ) -> std::result::Result<
        hound::WavReader<std::io::BufReader<Box<dyn crate::sealed::Source>>>,
        String,
    > {
        let file = crate::sealed::open(wav, self.seal.as_ref()).map_err(|e| e.to_string())?;
        hound::WavReader::new(std::io::BufReader::new(file)).map_err(|e| e.to_string())
    }
    fn draft_path(&self, id: &str) -> PathBuf {
        self.recordings_dir.join(format!("{id}.draft.json"))
    }
    /// Write a draft's file atomically and durably (temporary file, fsync, rename, fsync of the
    /// folder, which also makes the WAV's rename durable).
    fn put_draft(&self, draft: &Draft) -> Result<()> {
        let path = self.draft_path(&draft.id);
        let tmp = path.with_extension("json.part");
        let json = serde_json::to_vec_pretty(draft).expect("a draft serialises");
        let write = || -> std::io::Result<()> {
            let mut f = crate::sealed::Sink::create(&tmp, self.seal.as_ref())?;
            f.write_all(&json)?;
            f.finish()?;
            crate::crashpoint::reached("draft.written");
            std::fs::rename(&tmp, &path)?;
            crate::crashpoint::reached("draft.renamed");
            crate::audio::sync_dir(&self.recordings_dir)
        };
        write().map_err(Error::io(format!("saving the draft {}", path.display())))?;
        self.mirror(draft);
        Ok(())
    }
    fn lock_drafts(&self) -> std::sync::MutexGuard<'_, ()> {
        self.drafts.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// One draft by id.
    pub fn draft(&self, id: &str) -> Result<Draft> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(Error::InvalidInput(format!("'{id}' is not a draft")));
        }
        let path = self.draft_path(id);
        let bytes = crate::sealed::read(&path, self.seal.as_ref()).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound(format!(
                "the draft {id} is gone (saved or discarded already?)"
            )),
            _ => Error::Audio(format!(
                "the draft {} cannot be read ({e}); its recording is kept beside it",
                path.display()
            )),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::Audio(format!(
                "the draft {} is damaged ({e}); its recording is kept beside it",
                path.display()
            ))
        })
    }
    /// Every unsaved draft, oldest first. Damaged draft files are skipped (their recordings stay).
    pub fn drafts(&self) -> Vec<Draft> {
        let Ok(dir) = std::fs::read_dir(&self.recordings_dir) else {
            return Vec::new();
        };
        let mut out: Vec<Draft> = dir
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let id = name.strip_suffix(".draft.json")?.to_string();
                self.draft(&id).ok()
            })
            .collect();
        out.sort_by_key(|d| d.created_at);
        out
    }
}
