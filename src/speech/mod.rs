//! Speech to text: the microphone ([`recorder`]), whisper.cpp ([`transcriber`]), and the path
//! that joins them with the store ([`dictation`]): a recording is on disk before it is
//! transcribed, so a failed transcription loses nothing.

pub mod dictation;
pub mod recorder;
pub mod transcriber;
pub mod wer;

pub use dictation::Dictation;
pub use recorder::{InputDevice, Recorder};
pub use transcriber::{LazyTranscriber, Transcriber};
