//! What a crash or a kill left in the recordings folder, put right at the next start.

use super::*;

impl DictationDrafts {
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
                let audio = crate::sealed::read(&path, self.seal.as_ref())
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
    pub(super) fn reconcile(
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

/// What [`DictationDrafts::recover`] found.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Recovery {
    /// Recordings that became drafts.
    pub recovered: Vec<Draft>,
    /// What could not be recovered, and why (each a sentence for the user).
    pub problems: Vec<String>,
}
