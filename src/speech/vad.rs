//! Voice activity: Silero VAD (v6, MIT) on ONNX Runtime. The model hears 16 kHz audio in frames
//! of 512 samples (32 ms), each with the 64 samples before it, and carries a recurrent state from
//! frame to frame; it answers the probability that the frame holds speech.
//!
//! [`Vad`] is the loaded model (shared); [`VadStream`] is one recording's state.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ort::session::Session;
use ort::value::Tensor;

use crate::error::{Error, Result};
use crate::models::{self, onnx};

/// Samples per frame at 16 kHz.
pub const FRAME: usize = 512;
/// Samples of the previous frame the model sees in front of each frame.
const CONTEXT: usize = 64;
/// The recurrent state: 2 × batch 1 × 128.
const STATE: usize = 2 * 128;

/// The loaded Silero model.
pub struct Vad {
    session: Mutex<Session>,
}

impl Vad {
    /// Load the model the resolver finds (verified against the manifest).
    pub fn load() -> Result<Vad> {
        Vad::load_from(&models::resolve(models::SILERO_VAD)?)
    }

    pub fn load_from(path: &Path) -> Result<Vad> {
        // One thread: a frame is ~0.1 ms of work, and threads only add hand-over costs.
        let session = onnx::ort_session_threads(path, models::SILERO_VAD, Some(1))?;
        Ok(Vad {
            session: Mutex::new(session),
        })
    }

    /// A fresh stream (one recording).
    pub fn stream(self: &Arc<Self>) -> VadStream {
        VadStream {
            vad: self.clone(),
            state: vec![0.0; STATE],
            window: vec![0.0; CONTEXT + FRAME],
            pending: Vec::with_capacity(FRAME),
        }
    }

    fn run(&self, window: &[f32], state: &mut Vec<f32>) -> Result<f32> {
        let fail = |e: ort::Error| Error::ModelLoad {
            name: models::SILERO_VAD.into(),
            detail: e.to_string(),
        };
        let inputs = ort::inputs![
            "input" => Tensor::from_array(([1usize, window.len()], window.to_vec())).map_err(fail)?,
            "state" => Tensor::from_array(([2usize, 1, 128], std::mem::take(state))).map_err(fail)?,
            "sr" => Tensor::from_array(((), vec![crate::audio::SAMPLE_RATE as i64])).map_err(fail)?,
        ];
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let out = session.run(inputs).map_err(fail)?;
        let (_, p) = out["output"].try_extract_tensor::<f32>().map_err(fail)?;
        let (_, s) = out["stateN"].try_extract_tensor::<f32>().map_err(fail)?;
        if s.len() != STATE || p.is_empty() {
            return Err(Error::ModelCorrupt {
                path: models::SILERO_VAD.into(),
                detail: format!(
                    "it answered {} probabilities and a state of {}",
                    p.len(),
                    s.len()
                ),
            });
        }
        state.extend_from_slice(s);
        Ok(p[0])
    }
}

/// One recording's voice-activity state: feed it 16 kHz audio in any block size, get one speech
/// probability per complete 512-sample frame.
pub struct VadStream {
    vad: Arc<Vad>,
    state: Vec<f32>,
    /// The last `CONTEXT` samples of the previous frame, then the frame.
    window: Vec<f32>,
    pending: Vec<f32>,
}

impl VadStream {
    /// Speech probability (0..1) of each frame completed by `pcm`, in order.
    pub fn push(&mut self, pcm: &[f32]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity((self.pending.len() + pcm.len()) / FRAME);
        let mut rest = pcm;
        while !rest.is_empty() {
            let take = (FRAME - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == FRAME {
                self.window.copy_within(FRAME.., 0);
                self.window[CONTEXT..].copy_from_slice(&self.pending);
                self.pending.clear();
                out.push(self.vad.run(&self.window, &mut self.state)?);
            }
        }
        Ok(out)
    }
}

/// Silero VAD, loaded on first use ([`crate::lazy::Lazy`]).
pub type LazyVad = crate::lazy::Lazy<Vad>;

impl crate::lazy::Lazy<Vad> {
    pub fn new() -> LazyVad {
        crate::lazy::Lazy::with(Vad::load)
    }
}

impl Default for crate::lazy::Lazy<Vad> {
    fn default() -> Self {
        Self::new()
    }
}
