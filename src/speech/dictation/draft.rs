//! What a draft is: a dictation (or a transcribed file) not yet saved.

use super::*;

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

pub(super) fn dictated() -> String {
    SOURCE_DICTATED.into()
}

impl Draft {
    /// Take in what a transcription of the draft's file gave.
    pub(super) fn set_heard(&mut self, heard: Result<file::FileTranscript>) {
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
