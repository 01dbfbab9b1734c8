//! The user's choices that outlive a session (voice, speed, speaker, microphone), kept as one
//! small JSON file beside the memories. Written atomically (temp file, then rename), so a crash
//! mid-write leaves the old settings; a damaged file is reported and replaced by the defaults,
//! never fatal.

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
        }
    }
}

impl Settings {
    /// Check a new set of settings before it is saved.
    pub fn validate(&self) -> Result<()> {
        if !voice::voices().iter().any(|v| v.id == self.voice) {
            return Err(Error::InvalidInput(format!(
                "there is no voice '{}'",
                self.voice
            )));
        }
        if !(0.5..=2.0).contains(&self.speed) || self.speed.is_nan() {
            return Err(Error::InvalidInput(format!(
                "reading speed {} is outside 0.5–2.0",
                self.speed
            )));
        }
        if self.vocabulary.chars().count() > 600 {
            return Err(Error::InvalidInput(
                "the vocabulary is too long: whisper reads at most about 200 words of it".into(),
            ));
        }
        if self.unload_after_minutes > 24 * 60 {
            return Err(Error::InvalidInput(
                "unload after at most 1 440 minutes (a day), or 0 to keep the model loaded".into(),
            ));
        }
        Ok(())
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

    /// The saved settings; the defaults when there is no file yet. A damaged file is kept aside
    /// as `settings.json.damaged` and the defaults are returned with a note of what happened.
    pub fn load(&self) -> (Settings, Option<String>) {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(_) => return (Settings::default(), None),
        };
        match serde_json::from_str::<Settings>(&text) {
            Ok(s) if s.validate().is_ok() => (s, None),
            Ok(_) | Err(_) => {
                let aside = self.path.with_extension("json.damaged");
                let _ = std::fs::rename(&self.path, &aside);
                (
                    Settings::default(),
                    Some(format!(
                        "the settings file was damaged and has been reset (the old one is {})",
                        aside.display()
                    )),
                )
            }
        }
    }

    /// Validate and save.
    pub fn save(&self, s: &Settings) -> Result<()> {
        s.validate()?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(Error::io(format!("creating {}", dir.display())))?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(s).expect("settings serialise");
        std::fs::write(&tmp, text).map_err(Error::io(format!("writing {}", tmp.display())))?;
        std::fs::rename(&tmp, &self.path)
            .map_err(Error::io(format!("saving {}", self.path.display())))
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
        };
        f.save(&s).unwrap();
        // A file from before these settings existed still loads, with their defaults.
        std::fs::write(f.path(), r#"{"voice":"bm_george","speed":1.25}"#).unwrap();
        assert_eq!(f.load().0.shortcut_mode, ShortcutMode::Toggle);
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
}
