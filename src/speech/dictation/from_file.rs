//! An audio file the user has, transcribed into a draft; and Retry, which hears a draft's
//! recording again.

use super::*;

impl DictationDrafts {
    /// Transcribe an audio file the user has into a draft, with a time for each segment. The
    /// file stays where it is (the draft points at it); [`DictationDrafts::save_with`] copies it into
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
    pub(super) fn hear_file(
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
        let mut reader = self.wav_reader(Path::new(&draft.audio_path)).map_err(|e| {
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
}
