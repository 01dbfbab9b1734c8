//! Whisper (whisper.cpp through whisper-rs) on 16 kHz mono audio.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use whisper_rs::{
    FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState,
};

use crate::audio::SAMPLE_RATE;
use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::{models, optimisations};

/// Peak amplitude under which a recording is taken to be silence (about -50 dBFS).
pub const SILENCE_PEAK: f32 = 0.003;

/// A loaded whisper model.
pub struct Transcriber {
    ctx: WhisperContext,
    name: String,
    multilingual: bool,
    /// Tells this model's [`Workspace`]s from another's.
    id: u64,
}

/// Whisper's working memory for decoding (its caches and compute buffers: ~35 MiB for tiny.en,
/// more with a beam), kept from one decode to the next by whoever decodes many in a row (a
/// dictation's partials and segments, a file's stretches) and given back when dropped. Made
/// afresh for each decode, the memory freed by one is not all reused by the next, and a
/// dictation's peak grows with every partial (measured: docs/PERFORMANCE.md, "Memory,
/// measured"). One decode at a time: a workspace is `&mut`.
#[derive(Default)]
pub struct Workspace {
    state: Option<(u64, WhisperState)>,
}

impl Workspace {
    /// Whether it holds whisper's memory (after a first decode, until dropped).
    pub fn is_held(&self) -> bool {
        self.state.is_some()
    }
}

static NEXT_TRANSCRIBER_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Transcriber {
    /// Load the default model (tiny.en) that the resolver finds, verified against the manifest.
    pub fn load() -> Result<Transcriber> {
        Transcriber::load_model(models::WHISPER_TINY_EN)
    }

    /// Load the model file `name` of the manifest (`ggml-base.bin`) that the resolver finds.
    pub fn load_model(name: &str) -> Result<Transcriber> {
        Transcriber::load_from(&models::resolve(name)?)
    }

    /// Load a GGML whisper model from a path.
    pub fn load_from(path: &Path) -> Result<Transcriber> {
        whisper_rs::install_logging_hooks();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // whisper.cpp aborts the process on a malformed file; check its structure first.
        models::ggml::check_ggml_file(path)?;
        let p = path.to_str().ok_or_else(|| {
            Error::InvalidInput(format!("model path {} is not UTF-8", path.display()))
        })?;
        let ctx = WhisperContext::new_with_params(p, WhisperContextParameters::default()).map_err(
            |e| Error::ModelCorrupt {
                path: path.into(),
                detail: format!("whisper.cpp could not load it: {e}"),
            },
        )?;
        let multilingual = ctx.is_multilingual();
        Ok(Transcriber {
            ctx,
            name,
            multilingual,
            id: NEXT_TRANSCRIBER_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Transcribe 16 kHz mono samples to text (trimmed; empty when nothing was said), decoding
    /// the way [`Decoding::default`] says.
    pub fn transcribe(&self, pcm: &[f32]) -> Result<String> {
        self.transcribe_with(pcm, &Decoding::default())
    }

    /// Transcribe with explicit decoding choices (the harness compares them). A shrunk context
    /// that made whisper loop (the same words over and over, or more words than anyone says in
    /// the time) is decoded again with the full one.
    pub fn transcribe_with(&self, pcm: &[f32], how: &Decoding) -> Result<String> {
        self.transcribe_in(&mut Workspace::default(), pcm, how)
    }

    /// As [`Transcriber::transcribe_with`], in `work` (kept for the next decode).
    pub fn transcribe_in(
        &self,
        work: &mut Workspace,
        pcm: &[f32],
        how: &Decoding,
    ) -> Result<String> {
        let text = self.decode(work, pcm, how)?;
        if how.adapt_context && looks_looped(&text, pcm.len() as f32 / SAMPLE_RATE as f32) {
            let full = Decoding {
                adapt_context: false,
                ..how.clone()
            };
            return self.decode(work, pcm, &full);
        }
        Ok(text)
    }

    /// The state in `work`, made for this model if it holds none (or another model's).
    fn state<'w>(&self, work: &'w mut Workspace) -> Result<&'w mut WhisperState> {
        if work.state.as_ref().is_none_or(|(id, _)| *id != self.id) {
            work.state = None; // another model's memory goes before this one's is taken
            let state = self.ctx.create_state().map_err(|e| self.failed(e))?;
            work.state = Some((self.id, state));
        }
        Ok(&mut work.state.as_mut().expect("just made").1)
    }

    fn decode(&self, work: &mut Workspace, pcm: &[f32], how: &Decoding) -> Result<String> {
        check(pcm, how)?;
        // Whisper invents words ("you", "Thank you.") for silence: below this level nobody spoke.
        if is_silence(pcm) {
            return Ok(String::new());
        }
        // Whisper drops a first word that starts with the window: give it a moment of quiet in
        // front. And whisper.cpp ignores input shorter than one second: pad the end.
        let padded = pad(pcm, lead_in(pcm, how));
        let pcm = &padded[..];
        let mut params = self.params(how);
        if how.adapt_context {
            params.set_audio_ctx(audio_context(pcm.len()));
            // A shrunk context can make whisper loop; whisper's own fallback then re-decodes the
            // loop at every temperature (measured: 17 s for a 5.7 s clip). Cap the tokens, decode
            // once, and let `transcribe_with` redo a looping result with the full context.
            let seconds = pcm.len() as f32 / SAMPLE_RATE as f32;
            params.set_max_tokens((seconds * MAX_TOKENS_PER_S) as i32 + 16);
            params.set_temperature_inc(0.0);
        }
        params.set_no_timestamps(true);
        params.set_single_segment(how.adapt_context);
        let lease = optimisations::lease_threads();
        params.set_n_threads(lease.threads() as i32);
        let state = self.state(work)?;
        state.full(params, pcm).map_err(|e| self.failed(e))?;
        drop(lease);
        let mut text = String::new();
        for seg in state.as_iter() {
            text.push_str(&seg.to_str_lossy().map_err(|e| self.failed(e))?);
        }
        Ok(text.trim().to_string())
    }

    /// Transcribe a stretch of a longer recording (up to whisper's 30 s window) with whisper's
    /// own timestamps: each segment's start and end in ms from the start of `pcm`, and its text.
    /// The context is never shrunk here (a stretch fills the window). `abort` is polled by
    /// whisper.cpp while it works; once it is set the run stops with [`Error::Cancelled`].
    /// `work` is kept for the next stretch.
    pub fn timed_segments(
        &self,
        work: &mut Workspace,
        pcm: &[f32],
        how: &Decoding,
        abort: Option<Arc<AtomicBool>>,
    ) -> Result<Vec<TimedText>> {
        check(pcm, how)?;
        if is_silence(pcm) {
            return Ok(Vec::new());
        }
        let padded = pad(pcm, 0);
        let mut params = self.params(how);
        params.set_no_timestamps(false);
        params.set_single_segment(false);
        // whisper-rs 0.16's `set_abort_callback_safe` hands whisper.cpp a pointer to a boxed
        // trait object but reads it back as the closure itself, so its callback returns garbage
        // (runs aborted at random, error -6). The flag itself is the user data here: it lives in
        // `abort`, which outlives the run below.
        if let Some(flag) = &abort {
            unsafe extern "C" fn aborted(flag: *mut std::ffi::c_void) -> bool {
                // SAFETY: the pointer is `Arc::as_ptr` of the AtomicBool held by `abort` for the
                // whole of `state.full`, the only time whisper.cpp calls this.
                unsafe { (*(flag as *const AtomicBool)).load(Ordering::Relaxed) }
            }
            // SAFETY: see `aborted`.
            unsafe {
                params.set_abort_callback(Some(aborted));
                params.set_abort_callback_user_data(Arc::as_ptr(flag) as *mut std::ffi::c_void);
            }
        }
        let lease = optimisations::lease_threads();
        params.set_n_threads(lease.threads() as i32);
        let state = self.state(work)?;
        let run = state.full(params, &padded);
        drop(lease);
        if abort.is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled);
        }
        run.map_err(|e| self.failed(e))?;
        let mut out = Vec::new();
        for seg in state.as_iter() {
            let text = seg.to_str_lossy().map_err(|e| self.failed(e))?;
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            // whisper's timestamps count hundredths of a second
            out.push(TimedText {
                start_ms: seg.start_timestamp() * 10,
                end_ms: seg.end_timestamp() * 10,
                text: text.to_string(),
            });
        }
        Ok(out)
    }

    /// Whisper's parameters for a decode the way `how` says (sampling, language, threads,
    /// fallback, vocabulary, nothing printed).
    fn params<'a>(&self, how: &'a Decoding) -> FullParams<'a, 'a> {
        let mut params = if how.beam > 1 {
            FullParams::new(SamplingStrategy::BeamSearch {
                beam_size: how.beam as i32,
                patience: -1.0,
            })
        } else {
            FullParams::new(SamplingStrategy::Greedy { best_of: 1 })
        };
        if self.multilingual {
            params.set_language(Some(how.language.as_deref().unwrap_or("auto")));
        } else {
            params.set_language(Some("en"));
        }
        if !how.fallback {
            // whisper.cpp retries at rising temperatures when a decode looks wrong; off = once.
            params.set_temperature_inc(0.0);
        }
        if !how.vocabulary.trim().is_empty() {
            params.set_initial_prompt(how.vocabulary.trim());
        }
        // A workspace keeps whisper's state from one decode to the next: never let one clip's
        // words become the next one's prompt.
        params.set_no_context(true);
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        params.set_suppress_nst(true);
        params
    }

    fn failed(&self, e: whisper_rs::WhisperError) -> Error {
        Error::ModelLoad {
            name: self.name.clone(),
            detail: e.to_string(),
        }
    }

    /// The file this model was loaded from (its name, for messages).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Text whisper heard between two moments of a recording (ms from its start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct TimedText {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
}

/// What whisper must not be given: no audio, or a NUL in the text handed to C.
fn check(pcm: &[f32], how: &Decoding) -> Result<()> {
    if pcm.is_empty() {
        return Err(Error::InvalidInput(
            "the recording is empty: nothing was captured".into(),
        ));
    }
    // whisper-rs panics on a NUL in the text it hands to C (a CString): refuse it here.
    if how.vocabulary.contains('\0') {
        return Err(Error::InvalidInput(
            "the vocabulary contains a NUL character; remove it in Settings and retry".into(),
        ));
    }
    if how.language.as_deref().is_some_and(|l| l.contains('\0')) {
        return Err(Error::InvalidInput(
            "the language contains a NUL character; give a language code such as 'en'".into(),
        ));
    }
    Ok(())
}

/// Whether nobody spoke: the peak stays under [`SILENCE_PEAK`].
fn is_silence(pcm: &[f32]) -> bool {
    pcm.iter().fold(0.0f32, |m, x| m.max(x.abs())) < SILENCE_PEAK
}

/// Samples of quiet [`decode`](Transcriber::decode) puts in front of `pcm`: `how.lead_in_s`
/// where the clip opens with sound, none where it opens quiet. Whisper's first spectrogram
/// frame mirrors the first half window ([`HALF_WINDOW`]) of the clip, so a word that starts
/// there loses its onset; a clip that already opens with quiet does not need the lead-in, and
/// measured, is heard worse with it (Kokoro voices 5.7 against 5.1 % word error rate,
/// `docs/PERFORMANCE.md`).
fn lead_in(pcm: &[f32], how: &Decoding) -> usize {
    let head = &pcm[..pcm.len().min(HALF_WINDOW)];
    let rms = (head.iter().map(|x| x * x).sum::<f32>() / head.len().max(1) as f32).sqrt();
    if rms < SILENCE_PEAK {
        return 0;
    }
    (how.lead_in_s.max(0.0) * SAMPLE_RATE as f32) as usize
}

/// Half of whisper's spectrogram window (400 samples, 25 ms at 16 kHz).
const HALF_WINDOW: usize = 200;

/// `lead` samples of silence in front, and the end padded to the 1.1 s whisper.cpp needs at
/// least (it ignores shorter input).
fn pad(pcm: &[f32], lead: usize) -> Vec<f32> {
    let min = SAMPLE_RATE as usize + SAMPLE_RATE as usize / 10;
    let tail = min.saturating_sub(lead + pcm.len());
    [&vec![0.0; lead][..], pcm, &vec![0.0; tail][..]].concat()
}

/// Whether a transcript of `seconds` of audio shows whisper looping: over 5 words a second
/// (fast speech is 4), or a run of 3 or more words said twice in a row.
pub fn looks_looped(text: &str, seconds: f32) -> bool {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() as f32 > 5.0 * seconds.max(1.0) + 3.0 {
        return true;
    }
    (3..=words.len() / 2)
        .any(|n| (0..=words.len() - 2 * n).any(|i| words[i..i + n] == words[i + n..i + 2 * n]))
}

/// The encoder sees 50 frames a second and is built for 30 s (1 500 frames). A clip of a few
/// seconds needs only its own frames, plus a margin (a context cut too close makes whisper drop
/// or repeat the last words), rounded up to a multiple of 64 so the encoder's work is aligned.
/// Clips near 30 s keep the full context, where shrinking it costs accuracy.
pub fn audio_context(samples: usize) -> i32 {
    const FULL: usize = 1500;
    let frames = samples * 50 / SAMPLE_RATE as usize + CONTEXT_MARGIN_FRAMES;
    let aligned = frames.div_ceil(64) * 64;
    if aligned >= FULL * 3 / 4 {
        FULL as i32
    } else {
        aligned as i32
    }
}

/// Silence put in front of a clip that opens with sound (seconds): whisper misses a first word
/// that starts at the very first sample (measured: "Write to the landlord" heard as "to the
/// landlord"). A clip that opens quiet gets none (see `lead_in`).
pub const LEAD_IN_S: f32 = 0.3;

/// Tokens a second of speech can need (fast speech is about 4); more is a loop.
const MAX_TOKENS_PER_S: f32 = 8.0;

/// Frames of context beyond the clip's own (four seconds). Measured on the dictation set: one
/// second let whisper loop on a neural voice (30 % word error rate against 5 % with full
/// context); four matched the full context's accuracy at a quarter of its time.
pub const CONTEXT_MARGIN_FRAMES: usize = 200;

/// How whisper decodes. [`Decoding::default`] is what the app uses, chosen by measurement
/// (`umwelt-cli wer`, `docs/PERFORMANCE.md`); with `UMWELT_PERF=off` the audio context is whisper's
/// full 30 s.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoding {
    /// Beam width; 1 is greedy.
    pub beam: u8,
    /// Retry a decode that looks wrong at a higher temperature (whisper's fallback).
    pub fallback: bool,
    /// Shrink the encoder's context to the clip ([`audio_context`]).
    pub adapt_context: bool,
    /// Names and jargon the user expects (whisper's initial prompt).
    pub vocabulary: String,
    /// For a multilingual model: the language spoken, or `None` to detect it.
    pub language: Option<String>,
    /// Silence put in front of a clip that opens with sound (seconds), [`LEAD_IN_S`].
    pub lead_in_s: f32,
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding {
            beam: DEFAULT_BEAM,
            fallback: true,
            adapt_context: optimisations::enabled(),
            vocabulary: String::new(),
            language: None,
            lead_in_s: LEAD_IN_S,
        }
    }
}

/// The beam width the app decodes with (see `docs/PERFORMANCE.md`, dictation accuracy).
pub const DEFAULT_BEAM: u8 = 5;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_clip_that_opens_with_sound_gets_the_lead_in() {
        let how = Decoding::default();
        let tone: Vec<f32> = (0..16_000).map(|i| 0.2 * (i as f32 * 0.1).sin()).collect();
        let wanted = (LEAD_IN_S * SAMPLE_RATE as f32) as usize;
        assert_eq!(lead_in(&tone, &how), wanted, "sound at the first sample");
        // 20 ms of near-silence (a voice's breath) before the same sound: no lead-in.
        let quiet: Vec<f32> = (0..320).map(|i| 0.0005 * (i as f32).sin()).collect();
        let later = [&quiet[..], &tone[..]].concat();
        assert_eq!(lead_in(&later, &how), 0, "quiet first");
        // Sound within the first half window still counts as opening with sound.
        let soon = [&quiet[..100], &tone[..]].concat();
        assert_eq!(lead_in(&soon, &how), wanted, "sound 6 ms in");
        let none = Decoding {
            lead_in_s: 0.0,
            ..Decoding::default()
        };
        assert_eq!(lead_in(&tone, &none), 0, "lead-in off");
        assert_eq!(lead_in(&[], &how), 0, "empty");
    }

    #[test]
    fn a_looping_transcript_is_caught_and_a_normal_one_is_not() {
        assert!(looks_looped(
            "Parking is on level 3, near the lift by the yellow pillar. Near the lift by the yellow pillar.",
            4.0
        ));
        assert!(looks_looped(&"word ".repeat(60), 3.0));
        assert!(!looks_looped(
            "Parking is on level 3, near the lift by the yellow pillar.",
            4.0
        ));
        assert!(!looks_looped("very very good, it is it is", 3.0));
    }

    #[test]
    fn the_context_covers_the_clip_and_its_margin_and_long_clips_keep_it_all() {
        let five_s = audio_context(5 * SAMPLE_RATE as usize);
        assert!(five_s as usize >= 250 + CONTEXT_MARGIN_FRAMES && five_s % 64 == 0);
        assert_eq!(audio_context(25 * SAMPLE_RATE as usize), 1500);
    }
}
