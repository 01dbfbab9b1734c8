//! A draft saved as a memory (committed before the draft goes), or discarded (marked first, so
//! a crash halfway never brings it back).

use super::*;

impl DictationDrafts {
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
    /// [`DictationDrafts::save`]; for a transcribed file, `keep_file` copies the file into the
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
    pub(super) fn copy_in(&self, draft: &Draft) -> Result<String> {
        let from = Path::new(&draft.audio_path);
        let ext = from.extension().and_then(|e| e.to_str()).unwrap_or("audio");
        let to = self.recordings_dir.join(format!("{}.{ext}", draft.id));
        let part = to.with_extension(format!("{ext}.part"));
        let copy = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.recordings_dir)?;
            // The user's file may be world-readable; the copy is Umwelt's and private (and
            // sealed beside an encrypted memory file).
            let mut sink = crate::sealed::Sink::create(&part, self.seal.as_ref())?;
            std::io::copy(&mut std::fs::File::open(from)?, &mut sink)?;
            sink.finish()?;
            std::fs::set_permissions(&part, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
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
    pub(super) fn discarded_path(&self, id: &str) -> PathBuf {
        self.recordings_dir.join(format!("{id}.draft.discarded"))
    }
    pub(super) fn finish_discard(&self, marked: &Path, audio: &str) -> Result<()> {
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
}
