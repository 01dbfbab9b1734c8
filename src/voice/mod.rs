//! The voice: memories read aloud with Kokoro-82M, streamed to the speaker.
//!
//! ```text
//! text ─ text::Phraser ─ phonemes (espeak-ng) ─ kokoro::Kokoro ─ queue ─ playback (rodio / paced)
//!        sentences, phrases sized      24 kHz audio per phrase      device pulls samples
//!        to what is already queued
//! ```
//!
//! [`Speaker::speak`] returns at once with a [`Speech`]: synthesis runs on its own thread, one
//! phrase ahead of playback. The first phrase is kept short (two or three words) so the first
//! sound comes quickly; each later phrase is sized from the audio already waiting, so playback
//! never runs dry ([`SpeechReport::underruns`] counts it if it does). [`Speech::stop`] stops
//! playback at the next device pull and cancels the model run in progress.
//!
//! With `UMWELT_PERF=off` the voice speaks sentence by sentence (no short first phrase, no
//! adaptive sizing, default thread settings), which is the baseline the harness compares with.

pub mod kokoro;
pub mod pace;
pub mod phonemes;
pub mod playback;
mod reading;
mod speaker;
mod synthesis;
pub mod text;

pub use kokoro::{voices, Kokoro, VoiceInfo, VoiceStyle, SAMPLE_RATE};
pub use phonemes::Dialect;
pub use playback::{output_devices, write_wav, Output};
pub use reading::{Speech, SpeechReport, Stopper};
pub use speaker::{SpeakOptions, Speaker, DEFAULT_VOICE};
