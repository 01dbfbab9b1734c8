//! Whisper (whisper.cpp through whisper-rs) on 16 kHz mono audio.

use std::path::Path;

use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

use crate::audio::SAMPLE_RATE;
use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::{models, perf};

/// Peak amplitude under which a recording is taken to be silence (about -50 dBFS).
pub const SILENCE_PEAK: f32 = 0.003;

/// A loaded whisper model.
pub struct Transcriber {
    ctx: WhisperContext,
    name: String,
}

impl Transcriber {
    /// Load the default model (tiny.en) that the resolver finds, verified against the manifest.
    pub fn load() -> Result<Transcriber> {
        let path = models::resolve(models::WHISPER_TINY_EN)?;
        Transcriber::load_from(&path)
    }

    /// Load a GGML whisper model from a path.
    pub fn load_from(path: &Path) -> Result<Transcriber> {
        whisper_rs::install_logging_hooks();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // whisper.cpp aborts the process on a malformed file; check its structure first.
        models::whisper_ggml::check_ggml_file(path)?;
        let p = path.to_str().ok_or_else(|| {
            Error::InvalidInput(format!("model path {} is not UTF-8", path.display()))
        })?;
        let ctx = WhisperContext::new_with_params(p, WhisperContextParameters::default()).map_err(
            |e| Error::ModelCorrupt {
                path: path.into(),
                detail: format!("whisper.cpp could not load it: {e}"),
            },
        )?;
        Ok(Transcriber { ctx, name })
    }

    /// Transcribe 16 kHz mono samples to text (trimmed; empty when nothing was said).
    pub fn transcribe(&self, pcm: &[f32]) -> Result<String> {
        if pcm.is_empty() {
            return Err(Error::InvalidInput(
                "the recording is empty: nothing was captured".into(),
            ));
        }
        // Whisper invents words ("you", "Thank you.") for silence: below this level nobody spoke.
        // (A voice activity detector replaces this gate when dictation gets one.)
        if pcm.iter().fold(0.0f32, |m, x| m.max(x.abs())) < SILENCE_PEAK {
            return Ok(String::new());
        }
        // whisper.cpp ignores input shorter than one second; pad with silence.
        let min = SAMPLE_RATE as usize + SAMPLE_RATE as usize / 10;
        let padded;
        let pcm = if pcm.len() < min {
            padded = [pcm, &vec![0.0; min - pcm.len()]].concat();
            &padded[..]
        } else {
            pcm
        };
        let fail = |e: whisper_rs::WhisperError| Error::ModelLoad {
            name: self.name.clone(),
            detail: e.to_string(),
        };
        let mut state = self.ctx.create_state().map_err(fail)?;
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        params.set_language(Some("en"));
        params.set_n_threads(if perf::enabled() {
            perf::threads() as i32
        } else {
            1
        });
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        params.set_no_timestamps(true);
        params.set_suppress_nst(true);
        state.full(params, pcm).map_err(fail)?;
        let mut text = String::new();
        for seg in state.as_iter() {
            text.push_str(&seg.to_str_lossy().map_err(fail)?);
        }
        Ok(text.trim().to_string())
    }
}

/// Whisper tiny.en, loaded on first use ([`crate::lazy::Lazy`]).
pub type LazyTranscriber = Lazy<Transcriber>;

impl Lazy<Transcriber> {
    /// Loads [`Transcriber::load`] on first use.
    pub fn new() -> LazyTranscriber {
        Lazy::with(Transcriber::load)
    }
}

impl Default for Lazy<Transcriber> {
    fn default() -> Self {
        Self::new()
    }
}
