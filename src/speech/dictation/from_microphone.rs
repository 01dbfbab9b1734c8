//! A dictation from the microphone to a draft: the recorder spools it while the listener hears
//! it, and at Stop the spool becomes a WAV and the text a draft.

use super::draft::dictated;
use super::*;

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

    /// The fast half of [`DictationDrafts::stop`]: close the microphone (within the recorder's stall
    /// time, even if the device hangs) and flush the spool; the listener is still finishing.
    pub fn close(self) -> ClosedDictation {
        ClosedDictation {
            recording: self.recorder.stop(),
            listening: self.listening,
        }
    }
}

/// A dictation whose microphone is closed, its last words still being transcribed: hand it to
/// [`DictationDrafts::finish`].
pub struct ClosedDictation {
    recording: Result<Recording>,
    listening: JoinHandle<Result<String>>,
}

impl DictationDrafts {
    /// Start recording from `device` (or the default microphone), heard live by `ears`;
    /// `on_heard` is called from the listening thread whenever the text changes.
    pub fn start(
        &self,
        device: Option<&str>,
        ears: &Ears,
        on_heard: impl FnMut(&Heard) + Send + 'static,
    ) -> Result<LiveDictation> {
        let (tx, rx) = mpsc::channel();
        let recorder = Recorder::start(device, &self.recordings_dir, self.seal.as_ref(), Some(tx))?;
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
    /// The slow half of [`DictationDrafts::stop`], after [`LiveDictation::close`] let go of the
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
    pub(super) fn keep(
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
    pub(super) fn remove_spool(&self, spool_path: &Path) -> Result<()> {
        std::fs::remove_file(spool_path)
            .map_err(Error::io(format!("removing {}", spool_path.display())))?;
        crate::crashpoint::reached("spool.removed");
        Ok(())
    }
    pub(super) fn id_of(spool: &Path) -> String {
        spool
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
    /// The spool, resampled to 16 kHz, as `<id>.wav` (block by block), synced to the disk. The
    /// spool stays (it goes once the draft is written). An empty spool is removed, and is an
    /// [`Error::InvalidInput`].
    pub fn spool_to_wav(&self, spool_path: &Path) -> Result<PathBuf> {
        self.spool_to_wav_with(spool_path, |_| Ok(()))
    }
    /// As [`DictationDrafts::spool_to_wav`], with each block also handed to `each`.
    pub(super) fn spool_to_wav_with(
        &self,
        spool_path: &Path,
        mut each: impl FnMut(&[f32]) -> Result<()>,
    ) -> Result<PathBuf> {
        let mut reader = SpoolReader::open(spool_path, self.seal.as_ref())?;
        let wav = spool_path.with_extension("wav");
        let frames = reader.frames() * SAMPLE_RATE as u64 / reader.rate() as u64;
        let mut sink = WavSink::create(&wav, frames, self.seal.as_ref())?;
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
    pub(super) fn write_draft(
        &self,
        spool: &Path,
        wav: &Path,
        seconds: f32,
        heard: Result<String>,
    ) -> Result<Draft> {
        let id = DictationDrafts::id_of(spool);
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
    /// Turn a finished spool into a draft: WAV and transcription in one pass, block by block.
    pub fn draft_from_spool(&self, spool_path: &Path, ears: &Ears) -> Result<Draft> {
        // Held while it becomes a draft: no other recovery (another process) takes it too.
        let _hold = spool::hold(spool_path)?;
        let seconds = SpoolReader::open(spool_path, self.seal.as_ref())?.seconds() as f32;
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
    pub(super) fn draft_from_wav(&self, id: &str, wav: &Path, ears: &Ears) -> Result<Draft> {
        let spec = self.wav_reader(wav).map_err(|e| {
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
    pub(super) fn wav_for(&self, draft: &mut Draft) -> Result<()> {
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
}
