//! Speech to text: the microphone ([`recorder`]) spools to disk ([`spool`]) and feeds the
//! listener ([`live`]), which finds speech with the voice activity detector ([`vad`],
//! [`segmenter`]) and transcribes it with whisper.cpp ([`transcriber`]) segment by segment;
//! [`dictation`] joins them: drafts, saving, recovery after a crash. [`file`] transcribes an
//! audio file the user already has. [`wer`] scores accuracy.

pub mod dictation;
pub mod file;
pub mod live;
pub mod recorder;
pub mod segmenter;
pub mod spool;
pub mod transcriber;
pub mod vad;
pub mod wer;

pub use dictation::{
    AfterStop, ClosedDictation, DictationDrafts, Draft, Elsewhere, LiveDictation, Recovery,
};
pub use file::{transcribe_file, AudioFile, FileProgress, FileTranscript};
pub use live::{Ears, Heard, Listener};
pub use recorder::{InputDevice, Monitor, Recorder, Recording};
pub use transcriber::{Decoding, LazyTranscriber, TimedText, Transcriber, Workspace};
pub use vad::{LazyVad, Vad};
