//! The user's choices that outlive a session (voice, speed, speaker, microphone), kept as one
//! small JSON file beside the memories. Written atomically (a unique temporary file, fsync'd,
//! renamed, the folder fsync'd), so a crash or a power cut mid-write leaves the old settings and
//! concurrent saves never mix; a damaged file is reported and replaced by the defaults, a setting
//! that cannot be used (a NUL in the vocabulary) is reset alone, never fatal.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::voice;

/// Everything the user can set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
#[serde(default)]
pub struct Settings {
    /// Voice id for reading aloud (`af_heart`).
    pub voice: String,
    /// Reading speed, 0.5 to 2.0.
    pub speed: f32,
    /// Output device by name; `None` follows the system's default.
    pub speaker: Option<String>,
    /// Input device by name; `None` follows the system's default.
    pub microphone: Option<String>,
    /// The whisper model dictation uses.
    pub speech_model: SpeechModel,
    /// Names and jargon whisper should expect (passed as its initial prompt).
    pub vocabulary: String,
    /// Unload the speech model after this many idle minutes (0: keep it loaded).
    pub unload_after_minutes: u32,
    /// The global dictation shortcut (`Ctrl+Alt+Space`); empty for none.
    pub shortcut: String,
    /// Hold the shortcut to talk, or press once to start and again to stop.
    pub shortcut_mode: ShortcutMode,
    /// Settings → Agents: whether the MCP server (`umwelt-cli mcp`) offers agents its writing
    /// tools (`remember`, `forget`). Off until the user turns it on.
    pub agents_may_write: bool,
    /// Settings → After dictation: what a dictation becomes once it stops.
    pub after_dictation: AfterDictation,
    /// Settings → Privacy: how the memory file is kept on the disk. Applied when Umwelt next
    /// starts (`crate::at_rest`).
    pub encryption: Encryption,
}

/// How the memory file is kept on the disk (Settings → Privacy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Encryption {
    /// Encrypted with a random key kept in the system keyring (the default).
    #[default]
    Keyring,
    /// Encrypted with a key derived from a passphrase, asked for at every start.
    Passphrase,
    /// Plain: anyone who can read the data folder can read the memories.
    Off,
}

/// What a dictation becomes once it stops (Settings → After dictation). Whatever is chosen, the
/// text is kept in Umwelt (a draft or a memory) before anything is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AfterDictation {
    /// A draft in Umwelt's window, to read, edit and save.
    #[default]
    KeepDraft,
    /// Typed where the cursor is, in the app that has the focus; kept as a draft too.
    Type,
    /// Saved as a memory, then typed where the cursor is.
    TypeAndSave,
}

impl AfterDictation {
    /// Whether the text is typed into the focused app.
    pub fn types(self) -> bool {
        self != AfterDictation::KeepDraft
    }
}

/// Which whisper model transcribes dictation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub enum SpeechModel {
    /// English only, fastest (the default).
    #[default]
    #[serde(rename = "tiny.en")]
    TinyEn,
    /// Multilingual, slower, more accurate.
    #[serde(rename = "base")]
    Base,
}

impl SpeechModel {
    /// The model file (see `models/manifest.tsv`).
    pub fn file(self) -> &'static str {
        match self {
            SpeechModel::TinyEn => crate::models::WHISPER_TINY_EN,
            SpeechModel::Base => crate::models::WHISPER_BASE,
        }
    }
}

/// How the global shortcut records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ShortcutMode {
    /// Press to start, press again to stop.
    #[default]
    Toggle,
    /// Record while the shortcut is held.
    PushToTalk,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            voice: voice::DEFAULT_VOICE.into(),
            speed: 1.0,
            speaker: None,
            microphone: None,
            speech_model: SpeechModel::TinyEn,
            vocabulary: String::new(),
            unload_after_minutes: 10,
            shortcut: "Ctrl+Alt+Space".into(),
            shortcut_mode: ShortcutMode::Toggle,
            agents_may_write: false,
            after_dictation: AfterDictation::KeepDraft,
            encryption: Encryption::Keyring,
        }
    }
}

impl Settings {
    /// Check a new set of settings before it is saved: the first problem, as an
    /// [`Error::InvalidInput`] that names the setting.
    pub fn validate(&self) -> Result<()> {
        match self.problems().into_iter().next() {
            Some((_, problem)) => Err(Error::InvalidInput(problem)),
            None => Ok(()),
        }
    }

    /// Every setting that cannot be used: (its field, a sentence for the user).
    fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        // Text that reaches C (whisper's prompt, the device and shortcut names) must hold no NUL,
        // and none of it has a use for control characters (the vocabulary may break lines).
        for (field, name, text, allowed) in [
            ("voice", "the voice", Some(self.voice.as_str()), ""),
            ("speaker", "the speaker's name", self.speaker.as_deref(), ""),
            (
                "microphone",
                "the microphone's name",
                self.microphone.as_deref(),
                "",
            ),
            (
                "vocabulary",
                "the vocabulary",
                Some(self.vocabulary.as_str()),
                "\n\t\r",
            ),
            ("shortcut", "the shortcut", Some(self.shortcut.as_str()), ""),
        ] {
            if let Some(c) = text
                .into_iter()
                .flat_map(str::chars)
                .find(|c| c.is_control() && !allowed.contains(*c))
            {
                out.push((
                    field,
                    format!(
                        "{name} contains an invisible control character (U+{:04X}); remove it and save again",
                        c as u32
                    ),
                ));
            }
        }
        if !out.iter().any(|(f, _)| *f == "voice")
            && !voice::voices().iter().any(|v| v.id == self.voice)
        {
            out.push(("voice", format!("there is no voice '{}'", self.voice)));
        }
        if !(0.5..=2.0).contains(&self.speed) || self.speed.is_nan() {
            out.push((
                "speed",
                format!("reading speed {} is outside 0.5–2.0", self.speed),
            ));
        }
        if self.vocabulary.chars().count() > 600 {
            out.push((
                "vocabulary",
                "the vocabulary is too long: whisper reads at most about 200 words of it".into(),
            ));
        }
        if self.unload_after_minutes > 24 * 60 {
            out.push((
                "unload_after_minutes",
                "unload after at most 1 440 minutes (a day), or 0 to keep the model loaded".into(),
            ));
        }
        out
    }

    /// These settings with every setting that cannot be used put back to its default, and a
    /// sentence for each one reset (none: nothing was wrong).
    pub fn repaired(mut self) -> (Settings, Vec<String>) {
        let d = Settings::default();
        let mut notes = Vec::new();
        for (field, problem) in self.problems() {
            match field {
                "voice" => self.voice = d.voice.clone(),
                "speed" => self.speed = d.speed,
                "speaker" => self.speaker = d.speaker.clone(),
                "microphone" => self.microphone = d.microphone.clone(),
                "vocabulary" => self.vocabulary = d.vocabulary.clone(),
                "shortcut" => self.shortcut = d.shortcut.clone(),
                "unload_after_minutes" => self.unload_after_minutes = d.unload_after_minutes,
                _ => unreachable!("every field problems() names is reset here"),
            }
            notes.push(format!("{problem}: it was reset to the default"));
        }
        (self, notes)
    }

    /// How dictation decodes with these settings.
    pub fn decoding(&self) -> crate::speech::Decoding {
        crate::speech::Decoding {
            vocabulary: self.vocabulary.trim().to_string(),
            ..Default::default()
        }
    }

    pub fn speak_options(&self) -> voice::SpeakOptions {
        voice::SpeakOptions {
            voice: self.voice.clone(),
            speed: self.speed,
        }
    }
}

impl Settings {
    /// Settings from the bytes of a settings file, with any setting that cannot be used put back
    /// to its default and a note of each ([`Settings::repaired`]); `None` if the bytes are not
    /// settings at all (not UTF-8, not JSON, a field of the wrong type). What it returns always
    /// passes [`Settings::validate`].
    pub fn parse(bytes: &[u8]) -> Option<(Settings, Vec<String>)> {
        serde_json::from_slice::<Settings>(bytes)
            .ok()
            .map(Settings::repaired)
    }
}

/// The settings file and the settings in it.
pub struct SettingsFile {
    path: PathBuf,
}

impl SettingsFile {
    pub fn new(path: impl Into<PathBuf>) -> SettingsFile {
        SettingsFile { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved settings; the defaults when there is no file yet. A file that is not settings
    /// at all is kept aside as `settings.json.damaged` and the defaults are returned with a note
    /// of what happened. A setting that cannot be used (a NUL in the vocabulary, a voice that is
    /// gone) is put back to its default, the others kept, and the note says which; the file as
    /// it was is kept aside too, and the repaired settings are saved.
    pub fn load(&self) -> (Settings, Option<String>) {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Settings::default(), None)
            }
            Err(e) => {
                // Unreadable (permissions): left as it is, and not written over by a save
                // the user did not make.
                tracing::warn!("reading the settings file {}: {e}", self.path.display());
                return (
                    Settings::default(),
                    Some(format!(
                        "Your settings file {} could not be read ({e}), so Umwelt started with the default settings. The file is left as it is.",
                        self.path.display()
                    )),
                );
            }
        };
        let aside = self.path.with_extension("json.damaged");
        let Some((settings, notes)) = Settings::parse(&bytes) else {
            if let Err(e) = std::fs::rename(&self.path, &aside) {
                tracing::warn!("setting the damaged settings file aside: {e}");
            }
            return (
                Settings::default(),
                Some(format!(
                    "Your settings file was damaged, so Umwelt started with the default settings: \
                     choose yours again in Settings. The old file is kept as {}.",
                    aside.display()
                )),
            );
        };
        if notes.is_empty() {
            return (settings, None);
        }
        if let Err(e) = std::fs::copy(&self.path, &aside) {
            tracing::warn!("keeping a copy of the repaired settings file: {e}");
        }
        let saved = match self.save(&settings) {
            Ok(()) => String::new(),
            Err(e) => format!(" The repaired settings were not saved: {e}."),
        };
        (
            settings,
            Some(format!(
                "Some settings could not be used: {}. The rest are kept; check them in Settings. \
                 The old file is kept as {}.{saved}",
                notes.join("; "),
                aside.display()
            )),
        )
    }

    /// Validate and save: a unique temporary file in the same folder, written and fsync'd, then
    /// renamed over the settings and the folder fsync'd. Saves at the same time never mix (each
    /// writes its own temporary file; the last rename wins whole), and a power cut leaves either
    /// the old settings or the new ones.
    pub fn save(&self, s: &Settings) -> Result<()> {
        s.validate()?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.exists() {
            crate::paths::private_dir(dir)?;
        }
        let text = serde_json::to_string_pretty(s).expect("settings serialise");
        let write = || -> std::io::Result<()> {
            let mut tmp = tempfile::Builder::new()
                .prefix(".settings.")
                .suffix(".tmp")
                .tempfile_in(dir)?;
            tmp.write_all(text.as_bytes())?;
            tmp.as_file().sync_all()?;
            tmp.persist(&self.path).map_err(|e| e.error)?;
            std::fs::File::open(dir)?.sync_all()
        };
        write().map_err(Error::io(format!(
            "saving the settings to {} (check free disk space and the folder's permissions)",
            self.path.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_survive_damage() {
        let dir = tempfile::tempdir().unwrap();
        let f = SettingsFile::new(dir.path().join("settings.json"));
        assert_eq!(f.load(), (Settings::default(), None));
        let s = Settings {
            voice: "bm_george".into(),
            speed: 1.25,
            speaker: Some("default".into()),
            microphone: None,
            speech_model: SpeechModel::Base,
            vocabulary: "Siobhan, Kubernetes".into(),
            unload_after_minutes: 3,
            shortcut: "Ctrl+Shift+D".into(),
            shortcut_mode: ShortcutMode::PushToTalk,
            agents_may_write: true,
            after_dictation: AfterDictation::TypeAndSave,
            encryption: Encryption::Passphrase,
        };
        f.save(&s).unwrap();
        // A file from before these settings existed still loads, with their defaults.
        std::fs::write(f.path(), r#"{"voice":"bm_george","speed":1.25}"#).unwrap();
        assert_eq!(f.load().0.shortcut_mode, ShortcutMode::Toggle);
        // An older Umwelt's settings mean the default: encrypted, the key in the keyring.
        assert_eq!(f.load().0.encryption, Encryption::Keyring);
        f.save(&s).unwrap();
        assert_eq!(f.load().0, s);
        assert!(f
            .save(&Settings {
                speed: 9.0,
                ..s.clone()
            })
            .is_err());
        assert!(f
            .save(&Settings {
                voice: "nobody".into(),
                ..s.clone()
            })
            .is_err());
        assert_eq!(f.load().0, s, "a refused save changes nothing");
        std::fs::write(f.path(), "{ half a file").unwrap();
        let (loaded, note) = f.load();
        assert_eq!(loaded, Settings::default());
        assert!(note.unwrap().contains("damaged"));
        assert!(dir.path().join("settings.json.damaged").exists());
    }

    #[test]
    fn a_nul_in_a_setting_is_refused_on_save_and_names_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let f = SettingsFile::new(dir.path().join("settings.json"));
        let good = Settings {
            vocabulary: "Siobhan".into(),
            ..Settings::default()
        };
        f.save(&good).unwrap();
        for (bad, named) in [
            (
                Settings {
                    vocabulary: "Siob\0han".into(),
                    ..good.clone()
                },
                "vocabulary",
            ),
            (
                Settings {
                    shortcut: "Ctrl+\0".into(),
                    ..good.clone()
                },
                "shortcut",
            ),
            (
                Settings {
                    voice: "af_heart\u{7}".into(),
                    ..good.clone()
                },
                "voice",
            ),
            (
                Settings {
                    microphone: Some("mic\0".into()),
                    ..good.clone()
                },
                "microphone",
            ),
        ] {
            match f.save(&bad) {
                Err(Error::InvalidInput(m)) => assert!(m.contains(named), "{m}"),
                other => panic!("{named}: {other:?}"),
            }
        }
        assert_eq!(f.load(), (good, None), "a refused save changes nothing");
        // Lines in the vocabulary are fine.
        let lines = Settings {
            vocabulary: "Siobhan\nKubernetes".into(),
            ..Settings::default()
        };
        f.save(&lines).unwrap();
    }

    #[test]
    fn a_loaded_file_with_a_nul_in_the_vocabulary_resets_that_setting_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let f = SettingsFile::new(dir.path().join("settings.json"));
        std::fs::write(
            f.path(),
            r#"{"voice":"bm_george","speed":1.25,"vocabulary":"Siob\u0000han","shortcut":"Ctrl+Shift+D"}"#,
        )
        .unwrap();
        let (loaded, note) = f.load();
        assert_eq!(
            loaded,
            Settings {
                voice: "bm_george".into(),
                speed: 1.25,
                shortcut: "Ctrl+Shift+D".into(),
                ..Settings::default()
            }
        );
        let note = note.expect("the user is told");
        assert!(
            note.contains("vocabulary") && note.contains("reset"),
            "{note}"
        );
        assert!(dir.path().join("settings.json.damaged").exists());
        // The repaired settings were saved: the next start is quiet.
        assert_eq!(f.load(), (loaded, None));
    }

    #[test]
    fn concurrent_saves_never_mix_and_leave_one_of_the_saved_settings() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::sync::Arc::new(SettingsFile::new(dir.path().join("settings.json")));
        let each = |t: u32, i: u32| Settings {
            vocabulary: format!("thread {t} save {i} ").repeat(1 + (i as usize % 7)),
            unload_after_minutes: t * 100 + i,
            speaker: i.is_multiple_of(2).then(|| format!("speaker {t}")),
            ..Settings::default()
        };
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let f = f.clone();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        f.save(&each(t, i)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("no save failed");
        }
        let text = std::fs::read_to_string(f.path()).unwrap();
        let last: Settings = serde_json::from_str(&text).expect("the file is whole");
        let (t, i) = (
            last.unload_after_minutes / 100,
            last.unload_after_minutes % 100,
        );
        assert!(t < 8 && i < 50, "{last:?}");
        assert_eq!(last, each(t, i));
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("settings.json")]);
    }
}
