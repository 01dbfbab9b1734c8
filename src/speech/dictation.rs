//! From a finished recording to a memory: the audio is on disk first (spooled while recording,
//! then kept as a WAV file), then transcribed, then remembered. If transcription fails, the
//! recording stays on disk and the error says where; [`Dictation::recover`] turns spools left by
//! a crash into memories at the next start.

use std::path::{Path, PathBuf};

use crate::audio;
use crate::error::{Error, Result};
use crate::speech::{spool, Transcriber};
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
        self.transcribe_and_remember(&wav, samples, transcriber, store, scope, session)
    }

    /// Turn a finished spool into a memory: keep it as a 16 kHz WAV, remove the spool, then
    /// transcribe and remember. If transcription fails the WAV stays (the error says where).
    pub fn finish_spool(
        &self,
        spool_path: &Path,
        transcriber: &Transcriber,
        store: &Store,
        scope: &str,
        session: &str,
    ) -> Result<Memory> {
        let a = spool::read(spool_path)?;
        let pcm = audio::resample(&a.samples, a.rate, audio::SAMPLE_RATE)?;
        if pcm.is_empty() {
            let _ = std::fs::remove_file(spool_path);
            return Err(Error::InvalidInput(
                "the recording is empty: nothing was captured".into(),
            ));
        }
        let wav = self.save(&pcm)?;
        std::fs::remove_file(spool_path)
            .map_err(Error::io(format!("removing {}", spool_path.display())))?;
        self.transcribe_and_remember(&wav, &pcm, transcriber, store, scope, session)
    }

    fn transcribe_and_remember(
        &self,
        wav: &Path,
        pcm: &[f32],
        transcriber: &Transcriber,
        store: &Store,
        scope: &str,
        session: &str,
    ) -> Result<Memory> {
        let kept =
            |e: Error| Error::Audio(format!("{e} (the recording is kept at {})", wav.display()));
        // The recording is kept whole on disk; whisper hears it without its silent ends.
        let heard = audio::trim_silence(
            pcm,
            crate::speech::transcriber::SILENCE_PEAK,
            audio::SAMPLE_RATE as usize / 2,
        );
        let text = if heard.is_empty() {
            String::new()
        } else {
            transcriber.transcribe(heard).map_err(kept)?
        };
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

    /// Recordings a crash or a kill left behind: every spool in the recordings folder becomes a
    /// memory. A damaged spool is renamed `*.spool.damaged` and reported; the others go on.
    pub fn recover(&self, transcriber: &Transcriber, store: &Store, scope: &str) -> Recovery {
        let mut out = Recovery::default();
        for path in spool::unfinished(&self.recordings_dir) {
            match self.finish_spool(&path, transcriber, store, scope, "") {
                Ok(m) => out.recovered.push(m),
                Err(e) => {
                    if path.exists() {
                        let aside = path.with_extension("spool.damaged");
                        let _ = std::fs::rename(&path, &aside);
                    }
                    out.problems.push(e.to_string());
                }
            }
        }
        out
    }
}

/// What [`Dictation::recover`] found.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Recovery {
    /// Recordings that became memories.
    pub recovered: Vec<Memory>,
    /// What could not be recovered, and why (each a sentence for the user).
    pub problems: Vec<String>,
}
