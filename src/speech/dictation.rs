//! From the microphone to a memory, never losing a word:
//!
//! 1. [`Dictation::start`]: the recorder spools audio to `recordings/<id>.spool` every quarter
//!    second and hands each chunk to the listener, which transcribes it segment by segment
//!    ([`super::live`]) and reports partial text as it goes.
//! 2. [`Dictation::stop`]: the last segment is transcribed, the spool becomes
//!    `recordings/<id>.wav`, and the text becomes a **draft** (`recordings/<id>.draft.json`).
//!    A failed transcription still makes a draft: no text, the reason, and the audio to retry.
//!    The order keeps a copy on disk at every instant: the WAV is written and synced, then the
//!    draft, then the folder, and only then is the spool removed. If the disk is full the WAV
//!    cannot be written: the draft keeps the spool as its recording, and Retry makes the WAV.
//! 3. [`Dictation::save`]: the user's (possibly edited) text becomes a memory, durably
//!    committed, and only then does the draft go. A recording becomes at most one memory, so a
//!    save repeated (after a crash, or twice at once) finds the memory the first one made.
//!
//! Whatever a crash or a kill left is put right at the next start ([`Dictation::recover`]): a
//! spool becomes a draft, a WAV with neither draft nor memory becomes a draft, a draft already
//! saved goes, a half-discarded draft is discarded, half-written temporaries go. Each step is a
//! named [`crate::crashpoint`], and `tests/it/crash_sweep.rs` kills the process at each.
//!
//! In the app a draft is also a draft of the user's holder in the memory file
//! ([`Dictation::keeping_drafts_in`], `store/holdings/unsaved.rs`): each time the draft file is
//! written, its text is put in the draft named after the recording; saving merges it as the
//! memory in the memory's own transaction, discarding discards it. The files stay the record:
//! the memory file's copy is made again from them when it is missing or stale.
//!
//! Long recordings are read, resampled, written and transcribed a block at a time: memory does
//! not grow with their length.

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

/// A dictation not yet saved: its recording and the text heard, to be read, edited and saved
/// (or discarded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Draft {
    /// The recording's name (the time it started, in ms).
    pub id: String,
    /// The recording, 16 kHz WAV.
    pub audio_path: String,
    /// What was heard (empty if nothing was, or transcription failed).
    pub text: String,
    pub seconds: f32,
    /// When it was recorded (ms since the epoch).
    pub created_at: i64,
    /// Why there is no text (transcription failed, nothing was heard): offer Retry.
    pub problem: Option<String>,
    /// `dictated` (the microphone) or `transcribed` (an audio file the user chose).
    #[serde(default = "dictated")]
    pub source: String,
    /// What was heard, with times (a transcribed file; empty for a dictation).
    #[serde(default)]
    pub segments: Vec<TimedText>,
    /// The transcribed file's name, as the user knows it.
    #[serde(default)]
    pub file_name: Option<String>,
}

fn dictated() -> String {
    SOURCE_DICTATED.into()
}

impl Draft {
    /// Take in what a transcription of the draft's file gave.
    fn set_heard(&mut self, heard: Result<file::FileTranscript>) {
        match heard {
            Ok(t) => {
                self.text = t.text();
                self.seconds = t.seconds;
                self.problem = if t.segments.is_empty() {
                    Some("no speech was heard in the file".into())
                } else {
                    t.problem.clone()
                };
                self.segments = t.segments;
            }
            Err(e) => self.problem = Some(format!("transcription failed: {e}")),
        }
    }
}

/// A memory's source when it was dictated.
pub const SOURCE_DICTATED: &str = "dictated";
/// A memory's source when it was transcribed from an audio file.
pub const SOURCE_TRANSCRIBED: &str = "transcribed";

/// Where recordings and drafts are kept, and the way from one to a memory.
pub struct Dictation {
    recordings_dir: PathBuf,
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

/// A dictation being recorded and heard.
pub struct LiveDictation {
    recorder: Recorder,
    listening: JoinHandle<Result<String>>,
}

impl LiveDictation {
    /// Peak level (0..1) of the latest block from the microphone.
    pub fn level(&self) -> f32 {
        self.recorder.level()
    }

    /// Seconds recorded so far.
    pub fn seconds(&self) -> f32 {
        self.recorder.captured_seconds()
    }

    /// The microphone in use.
    pub fn device(&self) -> &str {
        self.recorder.device()
    }

    /// Why the microphone stopped sending sound, if it did (unplugged): time to stop, keeping
    /// what was captured ([`Recorder::lost`]).
    pub fn lost(&self) -> Option<String> {
        self.recorder.lost()
    }

    /// Samples captured and not yet on disk: at most a quarter second's, and none once the disk
    /// is full ([`Recorder::pending_samples`]).
    pub fn pending_samples(&self) -> usize {
        self.recorder.pending_samples()
    }

    /// The spool being written.
    pub fn spool_path(&self) -> &Path {
        self.recorder.spool_path()
    }

    /// Wait for at least `seconds` of audio (file-backed test devices run faster than real time).
    pub fn wait_for(&self, seconds: f32, timeout: std::time::Duration) -> bool {
        self.recorder.wait_for(seconds, timeout)
    }

    /// The fast half of [`Dictation::stop`]: close the microphone (within the recorder's stall
    /// time, even if the device hangs) and flush the spool; the listener is still finishing.
    pub fn close(self) -> ClosedDictation {
        ClosedDictation {
            recording: self.recorder.stop(),
            listening: self.listening,
        }
    }
}

/// A dictation whose microphone is closed, its last words still being transcribed: hand it to
/// [`Dictation::finish`].
pub struct ClosedDictation {
    recording: Result<Recording>,
    listening: JoinHandle<Result<String>>,
}

impl Dictation {
    pub fn new(recordings_dir: impl Into<PathBuf>) -> Dictation {
        Dictation {
            recordings_dir: recordings_dir.into(),
            drafts: std::sync::Mutex::new(()),
            notebook: None,
        }
    }

    /// Keep every draft also as a draft of `holder` in `store`, so a read through it sees the
    /// notebook as it will be once the dictation is saved.
    pub fn keeping_drafts_in(mut self, store: Arc<Store>, holder: impl Into<String>) -> Dictation {
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

    /// Start recording from `device` (or the default microphone), heard live by `ears`;
    /// `on_heard` is called from the listening thread whenever the text changes.
    pub fn start(
        &self,
        device: Option<&str>,
        ears: &Ears,
        on_heard: impl FnMut(&Heard) + Send + 'static,
    ) -> Result<LiveDictation> {
        let (tx, rx) = mpsc::channel();
        let recorder = Recorder::start(device, &self.recordings_dir, Some(tx))?;
        let listening = live::listen(rx, recorder.rate(), ears.listener(), on_heard)?;
        Ok(LiveDictation {
            recorder,
            listening,
        })
    }

    /// Stop: the last words are transcribed, the recording is kept as WAV, and the text becomes
    /// a draft. A transcription that failed leaves a draft with the reason and the audio.
    pub fn stop(&self, live: LiveDictation) -> Result<Draft> {
        self.finish(live.close())
    }

    /// The slow half of [`Dictation::stop`], after [`LiveDictation::close`] let go of the
    /// microphone: wait for the last words, keep the WAV, write the draft.
    pub fn finish(&self, closed: ClosedDictation) -> Result<Draft> {
        let heard = match closed.listening.join() {
            Ok(r) => r,
            Err(payload) => Err(Error::from_panic("hearing the dictation", payload)),
        };
        let recording = closed.recording?;
        // The spool stays locked (`recording`) until it has become a draft.
        self.keep(
            &recording.spool,
            recording.seconds,
            heard,
            recording.cut_short.clone(),
        )
    }

    /// A finished spool becomes a WAV and a draft, then goes. If the WAV cannot be written (the
    /// disk is full) the draft keeps the spool as its recording and says so.
    fn keep(
        &self,
        spool_path: &Path,
        seconds: f32,
        heard: Result<String>,
        cut_short: Option<String>,
    ) -> Result<Draft> {
        match self.spool_to_wav(spool_path) {
            Ok(wav) => {
                let mut draft = self.write_draft(spool_path, &wav, seconds, heard)?;
                if draft.problem.is_none() && cut_short.is_some() {
                    draft.problem = cut_short;
                    self.put_draft(&draft)?;
                }
                self.remove_spool(spool_path)?;
                Ok(draft)
            }
            Err(e @ Error::InvalidInput(_)) => Err(e),
            Err(e) => {
                tracing::warn!("keeping a recording as its spool: {e}");
                let mut draft = self.write_draft(spool_path, spool_path, seconds, heard)?;
                draft.problem = Some(format!(
                    "{}The recording could not be saved as a WAV file ({e}); it is kept as it was recorded. Free some space, then press Retry.",
                    cut_short.map(|c| format!("{c} ")).unwrap_or_default()
                ));
                self.put_draft(&draft)?;
                Ok(draft)
            }
        }
    }

    /// The spool is removed once its WAV and draft are on disk.
    fn remove_spool(&self, spool_path: &Path) -> Result<()> {
        std::fs::remove_file(spool_path)
            .map_err(Error::io(format!("removing {}", spool_path.display())))?;
        crate::crashpoint::reached("spool.removed");
        Ok(())
    }

    fn id_of(spool: &Path) -> String {
        spool
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn draft_path(&self, id: &str) -> PathBuf {
        self.recordings_dir.join(format!("{id}.draft.json"))
    }

    /// The spool, resampled to 16 kHz, as `<id>.wav` (block by block), synced to the disk. The
    /// spool stays (it goes once the draft is written). An empty spool is removed, and is an
    /// [`Error::InvalidInput`].
    pub fn spool_to_wav(&self, spool_path: &Path) -> Result<PathBuf> {
        self.spool_to_wav_with(spool_path, |_| Ok(()))
    }

    /// As [`Dictation::spool_to_wav`], with each block also handed to `each`.
    fn spool_to_wav_with(
        &self,
        spool_path: &Path,
        mut each: impl FnMut(&[f32]) -> Result<()>,
    ) -> Result<PathBuf> {
        let mut reader = SpoolReader::open(spool_path)?;
        let wav = spool_path.with_extension("wav");
        let mut sink = WavSink::create(&wav)?;
        let mut resampler = StreamResampler::new(reader.rate(), SAMPLE_RATE)?;
        let mut any = false;
        while let Some(block) = reader.next_block(SAMPLE_RATE as usize * 4)? {
            let pcm = resampler.push(&block)?;
            any |= !pcm.is_empty();
            sink.write(&pcm)?;
            each(&pcm)?;
        }
        let tail = resampler.finish()?;
        any |= !tail.is_empty();
        sink.write(&tail)?;
        each(&tail)?;
        if !any {
            sink.abandon();
            std::fs::remove_file(spool_path)
                .map_err(Error::io(format!("removing {}", spool_path.display())))?;
            return Err(Error::InvalidInput(
                "the recording is empty: nothing was captured".into(),
            ));
        }
        sink.finish()
    }

    fn write_draft(
        &self,
        spool: &Path,
        wav: &Path,
        seconds: f32,
        heard: Result<String>,
    ) -> Result<Draft> {
        let id = Dictation::id_of(spool);
        let (text, problem) = match heard {
            Ok(t) if t.trim().is_empty() => (
                String::new(),
                Some("no speech was heard in the recording".to_string()),
            ),
            Ok(t) => (t, None),
            Err(e) => (String::new(), Some(format!("transcription failed: {e}"))),
        };
        let draft = Draft {
            created_at: id.parse().unwrap_or_else(|_| crate::clock::now_ms()),
            id,
            audio_path: wav.to_string_lossy().into_owned(),
            text,
            seconds,
            problem,
            source: dictated(),
            segments: Vec::new(),
            file_name: None,
        };
        self.put_draft(&draft)?;
        Ok(draft)
    }

    /// Write a draft's file atomically and durably (temporary file, fsync, rename, fsync of the
    /// folder, which also makes the WAV's rename durable).
    fn put_draft(&self, draft: &Draft) -> Result<()> {
        let path = self.draft_path(&draft.id);
        let tmp = path.with_extension("json.part");
        let json = serde_json::to_vec_pretty(draft).expect("a draft serialises");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&json)?;
            f.sync_data()?;
            crate::crashpoint::reached("draft.written");
            std::fs::rename(&tmp, &path)?;
            crate::crashpoint::reached("draft.renamed");
            crate::audio::sync_dir(&self.recordings_dir)
        };
        write().map_err(Error::io(format!("saving the draft {}", path.display())))?;
        self.mirror(draft);
        Ok(())
    }

    /// Turn a finished spool into a draft: WAV and transcription in one pass, block by block.
    pub fn draft_from_spool(&self, spool_path: &Path, ears: &Ears) -> Result<Draft> {
        // Held while it becomes a draft: no other recovery (another process) takes it too.
        let _hold = spool::hold(spool_path)?;
        let seconds = SpoolReader::open(spool_path)?.seconds() as f32;
        let mut listener = Some(ears.listener());
        let mut failed: Option<Error> = None;
        let wav = self.spool_to_wav_with(spool_path, |pcm| {
            if let Some(l) = listener.as_mut() {
                if let Err(e) = catch_panic(HEARING, || l.hear(pcm)) {
                    failed = Some(e);
                    listener = None;
                }
            }
            Ok(())
        })?;
        let heard = match (listener, failed) {
            (_, Some(e)) => Err(e),
            (Some(l), None) => catch_panic(HEARING, || l.finish()),
            (None, None) => Err(Error::Audio("the listener stopped".into())),
        };
        let draft = self.write_draft(spool_path, &wav, seconds, heard)?;
        self.remove_spool(spool_path)?;
        Ok(draft)
    }

    /// A WAV with neither draft nor memory (an older version removed the spool before writing
    /// the draft) becomes a draft again: written first with no text, then transcribed.
    fn draft_from_wav(&self, id: &str, wav: &Path, ears: &Ears) -> Result<Draft> {
        let spec = hound::WavReader::open(wav).map_err(|e| {
            Error::Audio(format!(
                "the recording {} cannot be read: {e}",
                wav.display()
            ))
        })?;
        let seconds = spec.duration() as f32 / spec.spec().sample_rate.max(1) as f32;
        let draft = Draft {
            id: id.to_string(),
            audio_path: wav.to_string_lossy().into_owned(),
            text: String::new(),
            seconds,
            created_at: id
                .split('-')
                .next()
                .and_then(|ms| ms.parse().ok())
                .unwrap_or_else(crate::clock::now_ms),
            problem: Some("recovered after a crash; not transcribed yet".into()),
            source: dictated(),
            segments: Vec::new(),
            file_name: None,
        };
        self.put_draft(&draft)?;
        self.retry(id, ears)
    }

    /// A draft whose recording is still the spool (the disk was full when it stopped) gets its
    /// WAV now, if the disk lets it.
    fn wav_for(&self, draft: &mut Draft) -> Result<()> {
        let spool_path = PathBuf::from(&draft.audio_path);
        if spool_path.extension().is_none_or(|x| x != spool::EXT) {
            return Ok(());
        }
        let wav = self.spool_to_wav(&spool_path).map_err(|e| {
            Error::Audio(format!(
                "the recording is still as it was recorded, and could not be saved as a WAV file ({e}); free some space and try again"
            ))
        })?;
        draft.audio_path = wav.to_string_lossy().into_owned();
        self.put_draft(draft)?;
        self.remove_spool(&spool_path)
    }

    /// Transcribe an audio file the user has into a draft, with a time for each segment. The
    /// file stays where it is (the draft points at it); [`Dictation::save_with`] copies it into
    /// the recordings folder if the user asks. `progress` hears how far it has got; `cancel`
    /// stops it, and then no draft is made. A file that cannot be read is an error, and no
    /// draft is made either.
    pub fn draft_from_file(
        &self,
        path: &Path,
        ears: &Ears,
        cancel: Arc<AtomicBool>,
        progress: impl FnMut(FileProgress),
    ) -> Result<Draft> {
        let path = std::fs::canonicalize(path).map_err(Error::io(format!(
            "opening the audio file {}",
            path.display()
        )))?;
        let heard = self.hear_file(&path, ears, cancel, progress);
        let heard = match heard {
            Err(
                e
                @ (Error::Cancelled | Error::Audio(_) | Error::Io { .. } | Error::InvalidInput(_)),
            ) => return Err(e),
            other => other,
        };
        let now = crate::clock::now_ms();
        let mut draft = Draft {
            id: format!("file-{now}"),
            audio_path: path.to_string_lossy().into_owned(),
            text: String::new(),
            seconds: 0.0,
            created_at: now,
            problem: None,
            source: SOURCE_TRANSCRIBED.into(),
            segments: Vec::new(),
            file_name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        };
        draft.set_heard(heard);
        let _drafts = self.lock_drafts();
        crate::paths::private_dir(&self.recordings_dir)?;
        self.put_draft(&draft)?;
        Ok(draft)
    }

    fn hear_file(
        &self,
        path: &Path,
        ears: &Ears,
        cancel: Arc<AtomicBool>,
        progress: impl FnMut(FileProgress),
    ) -> Result<file::FileTranscript> {
        catch_panic(HEARING, || {
            file::transcribe_file(path, &ears.transcriber, &ears.decoding, cancel, progress)
        })
    }

    /// Transcribe a draft's recording again (after a failure, or with another model).
    pub fn retry(&self, id: &str, ears: &Ears) -> Result<Draft> {
        let mut draft = self.draft(id)?;
        if draft.source == SOURCE_TRANSCRIBED {
            let cancel = Arc::new(AtomicBool::new(false));
            let heard = self.hear_file(Path::new(&draft.audio_path), ears, cancel, |_| {});
            draft.set_heard(heard);
            let _drafts = self.lock_drafts();
            if !self.draft_path(id).exists() {
                return Err(Error::NotFound(format!(
                    "the draft {id} (saved or discarded while it was transcribed again)"
                )));
            }
            self.put_draft(&draft)?;
            return Ok(draft);
        }
        {
            let _drafts = self.lock_drafts();
            self.wav_for(&mut draft)?;
        }
        let mut reader = hound::WavReader::open(&draft.audio_path).map_err(|e| {
            Error::Audio(format!(
                "the recording {} cannot be read: {e}",
                draft.audio_path
            ))
        })?;
        let mut listener = ears.listener();
        let mut block = Vec::with_capacity(SAMPLE_RATE as usize * 4);
        let heard = catch_panic(HEARING, || {
            for s in reader.samples::<i16>() {
                let s = s.map_err(|e| Error::Audio(format!("the recording is damaged: {e}")))?;
                block.push(s as f32 / i16::MAX as f32);
                if block.len() == block.capacity() {
                    listener.hear(&block)?;
                    block.clear();
                }
            }
            listener.hear(&block)?;
            listener.finish()
        });
        match heard {
            Ok(t) if !t.trim().is_empty() => {
                draft.text = t;
                draft.problem = None;
            }
            Ok(_) => draft.problem = Some("no speech was heard in the recording".into()),
            Err(e) => draft.problem = Some(format!("transcription failed: {e}")),
        }
        let _drafts = self.lock_drafts();
        if !self.draft_path(id).exists() {
            return Err(Error::NotFound(format!(
                "the draft {id} (saved or discarded while it was transcribed again)"
            )));
        }
        self.put_draft(&draft)?;
        Ok(draft)
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
        let bytes = std::fs::read(&path).map_err(|_| {
            Error::NotFound(format!(
                "the draft {id} is gone (saved or discarded already?)"
            ))
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

    /// Save a draft as a memory with `text` (the user's edit of it) in `scope` / `session`. The
    /// recording stays, as the memory's audio; the draft goes once the memory is committed.
    /// Saving a draft that is being (or was, before a crash) saved gives the same memory.
    pub fn save(
        &self,
        id: &str,
        text: &str,
        store: &Store,
        scope: &str,
        session: &str,
    ) -> Result<Memory> {
        self.save_with(id, text, store, scope, session, false)
    }

    /// [`Dictation::save`]; for a transcribed file, `keep_file` copies the file into the
    /// recordings folder first, as the memory's audio (without it the memory has none: the
    /// file stays the user's, wherever they keep it).
    pub fn save_with(
        &self,
        id: &str,
        text: &str,
        store: &Store,
        scope: &str,
        session: &str,
        keep_file: bool,
    ) -> Result<Memory> {
        let _drafts = self.lock_drafts();
        let mut draft = self.draft(id)?;
        if text.trim().is_empty() {
            return Err(Error::InvalidInput(
                "the note is empty: type what was said, or discard the draft".into(),
            ));
        }
        let audio = if draft.source == SOURCE_TRANSCRIBED {
            keep_file.then(|| self.copy_in(&draft)).transpose()?
        } else {
            self.wav_for(&mut draft)?;
            Some(draft.audio_path.clone())
        };
        let id_new = store.remember_new(&NewMemory {
            scope,
            session,
            text: text.trim(),
            source: Some(&draft.source),
            audio_path: audio.as_deref(),
            unsaved: Some(id),
            ..Default::default()
        })?;
        crate::crashpoint::reached("memory.committed");
        match std::fs::remove_file(self.draft_path(id)) {
            // Another save of the same draft removed it first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            r => r.map_err(Error::io(format!("removing the draft {id}")))?,
        }
        crate::crashpoint::reached("draft.removed");
        store.get(id_new)
    }

    /// A transcribed file copied into the recordings folder as `<draft id>.<ext>`, synced.
    fn copy_in(&self, draft: &Draft) -> Result<String> {
        let from = Path::new(&draft.audio_path);
        let ext = from.extension().and_then(|e| e.to_str()).unwrap_or("audio");
        let to = self.recordings_dir.join(format!("{}.{ext}", draft.id));
        let part = to.with_extension(format!("{ext}.part"));
        let copy = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.recordings_dir)?;
            std::fs::copy(from, &part)?;
            // The user's file may be world-readable; the copy is Umwelt's and private.
            std::fs::set_permissions(&part, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
            std::fs::File::open(&part)?.sync_all()?;
            std::fs::rename(&part, &to)?;
            crate::audio::sync_dir(&self.recordings_dir)
        };
        copy().map_err(|e| {
            let _ = std::fs::remove_file(&part); // a partial copy is worth nothing
            Error::io(format!(
                "copying {} into the recordings folder (free some space, or save without keeping the file)",
                from.display()
            ))(e)
        })?;
        Ok(to.to_string_lossy().into_owned())
    }

    /// Throw a draft away, recording and all. The draft is first marked discarded, so a crash
    /// halfway never brings the recording back as a draft.
    pub fn discard(&self, id: &str) -> Result<()> {
        let _drafts = self.lock_drafts();
        let draft = self.draft(id)?;
        let marked = self.discarded_path(id);
        std::fs::rename(self.draft_path(id), &marked)
            .map_err(Error::io(format!("discarding the draft {id}")))?;
        self.unmirror(id);
        self.finish_discard(&marked, &draft.audio_path)
    }

    fn discarded_path(&self, id: &str) -> PathBuf {
        self.recordings_dir.join(format!("{id}.draft.discarded"))
    }

    fn finish_discard(&self, marked: &Path, audio: &str) -> Result<()> {
        // A transcribed file stays where the user keeps it: only a recording of ours goes.
        let ours = Path::new(audio).parent() == Some(self.recordings_dir.as_path());
        match if ours {
            std::fs::remove_file(audio)
        } else {
            Ok(())
        } {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(format!("removing the recording {audio}"))(e))
            }
            _ => {}
        }
        std::fs::remove_file(marked).map_err(Error::io(format!("removing {}", marked.display())))
    }

    /// Put right whatever a crash or a kill left in the recordings folder, in this order: a
    /// half-discarded draft is discarded; half-written temporaries go; a draft whose memory was
    /// committed goes; a spool whose draft exists goes; every other spool becomes a draft; a WAV
    /// with neither draft nor memory becomes a draft. Recordings still being recorded or stopped
    /// (their spool is locked) are left alone. A damaged spool is renamed `*.spool.damaged` and
    /// reported; the others go on.
    ///
    /// `ears` loads the speech models, called at most once and only when a recording has to be
    /// transcribed (at most starts there are none, and whisper need not load). If it fails, the
    /// recordings that needed it stay as they are, for the next start, and the failure is
    /// reported.
    pub fn recover(&self, ears: &dyn Fn() -> Result<Ears>, store: &Store) -> Recovery {
        let mut out = Recovery::default();
        // Not tried yet, or what trying gave (`None`: it failed, and that is reported once).
        let mut loaded: Option<Option<Ears>> = None;
        let mut ears_now = |out: &mut Recovery| -> Option<Ears> {
            loaded
                .get_or_insert_with(|| match ears() {
                    Ok(e) => Some(e),
                    Err(e) => {
                        tracing::warn!("recovery: loading the speech models: {e}");
                        out.problems.push(format!("loading the speech models: {e}"));
                        None
                    }
                })
                .clone()
        };
        let Ok(dir) = std::fs::read_dir(&self.recordings_dir) else {
            return out;
        };
        let mut names: Vec<String> = dir
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let id_of = |name: &str| name.split('.').next().unwrap_or_default().to_string();
        let busy: std::collections::HashSet<String> = names
            .iter()
            .filter(|n| n.ends_with(&format!(".{}", spool::EXT)))
            .filter(|n| spool::in_use(&self.recordings_dir.join(n)))
            .map(|n| id_of(n))
            .collect();
        fn problem(out: &mut Recovery, what: String, e: &dyn std::fmt::Display) {
            tracing::warn!("recovery: {what}: {e}");
            out.problems.push(format!("{what}: {e}"));
        }
        let mut draft_files: std::collections::HashSet<String> = names
            .iter()
            .filter(|n| n.ends_with(".draft.json"))
            .map(|n| id_of(n))
            .collect();
        let here = |name: &str| self.recordings_dir.join(name);
        let mut drafts = std::collections::HashMap::new();
        for name in names.iter().filter(|n| !busy.contains(&id_of(n))) {
            let path = here(name);
            if name.ends_with(".draft.discarded") {
                self.unmirror(&id_of(name));
                let audio = std::fs::read(&path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Draft>(&b).ok())
                    .map(|d| d.audio_path)
                    .unwrap_or_default();
                if let Err(e) = self.finish_discard(&path, &audio) {
                    problem(&mut out, format!("finishing the discard of {name}"), &e);
                }
            } else if name.ends_with(".part") {
                if let Err(e) = std::fs::remove_file(&path) {
                    problem(&mut out, format!("removing the half-written {name}"), &e);
                }
            } else if let Some(id) = name.strip_suffix(".draft.json") {
                match self.draft(id) {
                    Ok(d) => match store.memory_with_audio(&d.audio_path) {
                        Ok(Some(_)) => {
                            if let Err(e) = std::fs::remove_file(&path) {
                                problem(&mut out, format!("removing the saved draft {id}"), &e);
                            }
                        }
                        Ok(None) => {
                            drafts.insert(id.to_string(), d);
                        }
                        Err(e) => problem(&mut out, format!("checking the draft {id}"), &e),
                    },
                    // A damaged draft stays, and so does its recording.
                    Err(e) => problem(&mut out, format!("reading the draft {id}"), &e),
                }
            }
        }
        let audio_of_drafts: std::collections::HashSet<&str> =
            drafts.values().map(|d| d.audio_path.as_str()).collect();
        for name in names.iter().filter(|n| !busy.contains(&id_of(n))) {
            let path = here(name);
            let id = id_of(name);
            if name.ends_with(&format!(".{}", spool::EXT)) && path.exists() {
                if let Some(d) = drafts.get(&id) {
                    // The stop got as far as the draft; only the spool's removal was left (unless
                    // the draft keeps the spool as its recording: a full disk).
                    if Path::new(&d.audio_path) != path {
                        if let Err(e) = std::fs::remove_file(&path) {
                            problem(&mut out, format!("removing {name}"), &e);
                        }
                    }
                    continue;
                }
                // Its WAV (if the kill came after it) is rewritten with the draft.
                let Some(ears) = ears_now(&mut out) else {
                    continue;
                };
                draft_files.insert(id.clone());
                match self.draft_from_spool(&path, &ears) {
                    Ok(d) => out.recovered.push(d),
                    Err(e) => {
                        if path.exists() {
                            let aside = path.with_extension("spool.damaged");
                            if let Err(e) = std::fs::rename(&path, &aside) {
                                tracing::warn!("setting aside {name}: {e}");
                            }
                        }
                        out.problems.push(e.to_string());
                    }
                }
            } else if name.ends_with(".wav") && path.exists() {
                let audio = path.to_string_lossy();
                if audio_of_drafts.contains(audio.as_ref()) || draft_files.contains(&id) {
                    continue;
                }
                match store.memory_with_audio(&audio) {
                    Ok(Some(_)) => {}
                    Ok(None) => match ears_now(&mut out) {
                        Some(ears) => match self.draft_from_wav(&id, &path, &ears) {
                            Ok(d) => out.recovered.push(d),
                            Err(e) => out.problems.push(e.to_string()),
                        },
                        None => {}
                    },
                    Err(e) => out.problems.push(e.to_string()),
                }
            }
        }
        self.reconcile(&drafts, &out.recovered, &busy, &mut out.problems);
        out
    }

    /// Make the memory file's unsaved dictations those of the recordings folder: a copy whose
    /// draft file is gone is discarded, and every draft left gets its copy (made again if a
    /// crash came between the draft file and its copy, or the file is new).
    fn reconcile(
        &self,
        kept: &std::collections::HashMap<String, Draft>,
        recovered: &[Draft],
        busy: &std::collections::HashSet<String>,
        problems: &mut Vec<String>,
    ) {
        let Some(n) = &self.notebook else { return };
        let names = match n.store.unsaved_names() {
            Ok(names) => names,
            Err(e) => {
                problems.push(format!("reading the unsaved dictations: {e}"));
                return;
            }
        };
        let here = |id: &str| {
            kept.contains_key(id) || busy.contains(id) || recovered.iter().any(|d| d.id == id)
        };
        for name in names.iter().filter(|name| !here(name)) {
            if let Err(e) = n.store.drop_unsaved(name) {
                problems.push(format!("discarding the copy of the draft {name}: {e}"));
            }
        }
        for d in kept.values() {
            self.mirror(d);
        }
    }
}

/// What [`Dictation::recover`] found.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Recovery {
    /// Recordings that became drafts.
    pub recovered: Vec<Draft>,
    /// What could not be recovered, and why (each a sentence for the user).
    pub problems: Vec<String>,
}
