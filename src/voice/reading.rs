//! A reading in progress: a reply being spoken or a recording being played. It can be waited
//! on, asked for its first sound, or stopped from any thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use ort::session::RunOptions;
use serde::{Deserialize, Serialize};

use super::kokoro::SAMPLE_RATE;
use super::playback::PlayState;
use super::synthesis::SynthStats;
use crate::error::{Error, Result};

/// What one spoken reply took.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct SpeechReport {
    /// From `speak` to the first synthesised sample taken by the output (none if nothing played).
    pub first_audio_ms: Option<f64>,
    /// Time spent in the model.
    pub synth_ms: f64,
    /// Speech produced, in seconds (pauses excluded).
    pub audio_seconds: f64,
    /// `synth_ms / 1000 / audio_seconds`: under 1 is faster than real time.
    pub rtf: f64,
    /// Times the output asked for audio that was not ready yet, after playback began.
    pub underruns: u32,
    /// Pauses the voice added between two words to stay ahead of playback, in ms in total
    /// (usually one short one after the first phrase; 0 when speaking sentence by sentence).
    pub planned_pause_ms: f64,
    pub phrases: u32,
    /// Stopped before the end.
    pub stopped: bool,
    /// Whole text spoken in ms, from `speak` to the last sample.
    pub total_ms: f64,
    /// The audio (24 kHz mono) for [`Output::Paced`] and [`Output::Collect`]; empty for a device.
    #[serde(skip)]
    pub samples: Vec<f32>,
}

impl std::fmt::Debug for SpeechReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechReport")
            .field("first_audio_ms", &self.first_audio_ms)
            .field("synth_ms", &self.synth_ms)
            .field("audio_seconds", &self.audio_seconds)
            .field("rtf", &self.rtf)
            .field("underruns", &self.underruns)
            .field("planned_pause_ms", &self.planned_pause_ms)
            .field("phrases", &self.phrases)
            .field("stopped", &self.stopped)
            .field("total_ms", &self.total_ms)
            .field("samples", &self.samples.len())
            .finish()
    }
}

/// A reply being spoken.
pub struct Speech {
    pub(super) t0: Instant,
    pub(super) state: Arc<PlayState>,
    /// The model run to cancel on Stop (a recording has none).
    pub(super) cancel: Option<Arc<RunOptions>>,
    pub(super) synth: Option<JoinHandle<Result<SynthStats>>>,
    pub(super) player: Option<JoinHandle<Result<Vec<f32>>>>,
}

/// A handle that stops a [`Speech`] from another thread.
#[derive(Clone)]
pub struct Stopper {
    state: Arc<PlayState>,
    /// The model run to cancel on Stop (a recording has none).
    cancel: Option<Arc<RunOptions>>,
}

impl Stopper {
    /// Stop now: the device gets no more samples, the model run in progress is cancelled.
    pub fn stop(&self) {
        self.state.stop.store(true, Ordering::Relaxed);
        if let Some(Err(e)) = self.cancel.as_ref().map(|c| c.terminate()) {
            tracing::warn!("cancelling the voice's model run: {e}");
        }
    }
}

impl Speech {
    pub fn stopper(&self) -> Stopper {
        Stopper {
            state: self.state.clone(),
            cancel: self.cancel.clone(),
        }
    }

    pub fn stop(&self) {
        self.stopper().stop()
    }

    /// Wait (up to `timeout`) until the output takes its first sample; the time from `speak`
    /// to then, in ms. `None` if it did not happen in time (or the reply ended silent).
    pub fn wait_first_audio(&self, timeout: std::time::Duration) -> Option<f64> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(t) = self.state.first_sample() {
                return Some(t.duration_since(self.t0).as_secs_f64() * 1e3);
            }
            if Instant::now() > until
                || self.synth.as_ref().is_none_or(|h| h.is_finished())
                    && self.player.as_ref().is_none_or(|h| h.is_finished())
            {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Wait for the end (or the stop) and say what it took.
    pub fn wait(mut self) -> Result<SpeechReport> {
        let synth = self
            .synth
            .take()
            .expect("joined once")
            .join()
            .map_err(|_| Error::Audio("the voice thread crashed".into()))?;
        let played = self
            .player
            .take()
            .expect("joined once")
            .join()
            .map_err(|_| Error::Audio("the playback thread crashed".into()))?;
        let stats = synth?;
        let samples = played?;
        let audio_seconds = stats.audio_samples as f64 / SAMPLE_RATE as f64;
        Ok(SpeechReport {
            first_audio_ms: self
                .state
                .first_sample()
                .map(|t| t.duration_since(self.t0).as_secs_f64() * 1e3),
            synth_ms: stats.synth_ms,
            audio_seconds,
            rtf: if audio_seconds > 0.0 {
                stats.synth_ms / 1e3 / audio_seconds
            } else {
                0.0
            },
            underruns: self.state.underruns.load(Ordering::Relaxed),
            planned_pause_ms: stats.planned_pause_ms,
            phrases: stats.phrases,
            stopped: self.state.stop.load(Ordering::Relaxed),
            total_ms: self.t0.elapsed().as_secs_f64() * 1e3,
            samples,
        })
    }
}

impl Drop for Speech {
    fn drop(&mut self) {
        if self.synth.is_some() {
            // Dropped without waiting: stop, so no thread keeps talking on its own.
            self.stop();
        }
    }
}
