//! Speech to text: the microphone ([`recorder`]), whisper.cpp ([`transcriber`]), and the path
//! that joins them with the store ([`dictation`]). A recording is spooled to disk while it is
//! recorded ([`spool`]), so a crash loses at most the last quarter second, and a spool left by
//! a crash becomes a memory at the next start.

pub mod dictation;
pub mod recorder;
pub mod spool;
pub mod transcriber;
pub mod wer;

pub use dictation::{Dictation, Recovery};
pub use recorder::{InputDevice, Recorder, Recording};
pub use transcriber::{LazyTranscriber, Transcriber};
