//! From a finished recording to a memory: the audio is written to disk first, then transcribed,
//! then remembered. If transcription fails, the recording stays on disk and the error says where.

use std::path::{Path, PathBuf};

use crate::audio;
use crate::error::{Error, Result};
use crate::speech::Transcriber;
use crate::store::{Memory, NewMemory, Store};

/// Where recordings are kept, and how a finished one becomes a memory.
pub struct Dictation {
    recordings_dir: PathBuf,
}

impl Dictation {
    pub fn new(recordings_dir: impl Into<PathBuf>) -> Dictation {
        Dictation {
            recordings_dir: recordings_dir.into(),
        }
    }

    pub fn recordings_dir(&self) -> &Path {
        &self.recordings_dir
    }

    /// Write 16 kHz mono samples to a new WAV file in the recordings folder.
    pub fn save(&self, samples: &[f32]) -> Result<PathBuf> {
        if samples.is_empty() {
            return Err(Error::InvalidInput(
                "the recording is empty: nothing was captured".into(),
            ));
        }
        std::fs::create_dir_all(&self.recordings_dir).map_err(Error::io(format!(
            "creating the recordings folder {}",
            self.recordings_dir.display()
        )))?;
        let stamp = crate::store::now_ms();
        let mut path = self.recordings_dir.join(format!("{stamp}.wav"));
        let mut n = 1;
        while path.exists() {
            path = self.recordings_dir.join(format!("{stamp}-{n}.wav"));
            n += 1;
        }
        audio::write_wav_16k_mono(&path, samples)?;
        Ok(path)
    }

    /// Save, transcribe and remember a recording in `scope` / `session`.
    pub fn finish(
        &self,
        samples: &[f32],
        transcriber: &Transcriber,
        store: &Store,
        scope: &str,
        session: &str,
    ) -> Result<Memory> {
        let wav = self.save(samples)?;
        let kept =
            |e: Error| Error::Audio(format!("{e} (the recording is kept at {})", wav.display()));
        let text = transcriber.transcribe(samples).map_err(kept)?;
        if text.trim().is_empty() {
            return Err(kept(Error::InvalidInput(
                "no speech was heard in the recording".into(),
            )));
        }
        let audio_path = wav.to_string_lossy().into_owned();
        let id = store
            .remember_new(&NewMemory {
                scope,
                session,
                text: &text,
                source: Some("dictated"),
                audio_path: Some(&audio_path),
                ..Default::default()
            })
            .map_err(kept)?;
        store.get(id)
    }
}
