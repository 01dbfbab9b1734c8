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
pub mod text;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use ort::session::RunOptions;
use serde::{Deserialize, Serialize};

pub use kokoro::{voices, Kokoro, VoiceInfo, VoiceStyle, SAMPLE_RATE};
pub use phonemes::Dialect;
pub use playback::output_devices;

use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::optimisations;
use pace::{Pace, LARGEST_PHRASE};
use playback::{PlayState, StreamSource};
use text::Phraser;

/// The voice used when the user has not picked one.
pub const DEFAULT_VOICE: &str = "af_heart";
/// What [`Speaker::warm_up`] synthesises (and nobody hears) to measure the machine.
const WARM_UP_SENTENCE: &str = "Here is what you told me.";
/// Amplitude under which a phrase's edges count as silence (trimmed, then pauses are ours).
const EDGE_SILENCE: f32 = 0.004;

/// How to speak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct SpeakOptions {
    /// A voice id from [`voices`] (`af_heart`).
    pub voice: String,
    /// 0.5 (slow) to 2.0 (fast); 1.0 is the voice's own pace.
    pub speed: f32,
}

impl Default for SpeakOptions {
    fn default() -> Self {
        SpeakOptions {
            voice: DEFAULT_VOICE.into(),
            speed: 1.0,
        }
    }
}

/// Where the audio goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// An output device by name, or the default one.
    Device(Option<String>),
    /// A consumer that pulls at real-time pace like a device, keeping the samples (the harness).
    Paced,
    /// No playback: synthesise everything and keep it (for `--out file.wav`).
    Collect,
}

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

/// Loads the model on first use and keeps the voices it has read.
pub struct Speaker {
    kokoro: Lazy<Kokoro>,
    styles: Mutex<HashMap<String, Arc<VoiceStyle>>>,
    /// What a phrase costs here, learned by every reply and carried to the next.
    pace: Arc<Mutex<Pace>>,
}

impl Default for Speaker {
    fn default() -> Self {
        Speaker::new()
    }
}

impl Speaker {
    /// Nothing is loaded until the first [`Speaker::speak`] (or [`Speaker::warm_up`]).
    pub fn new() -> Speaker {
        Speaker {
            kokoro: Lazy::with(Kokoro::load),
            styles: Mutex::new(HashMap::new()),
            pace: Arc::new(Mutex::new(Pace::default())),
        }
    }

    /// Load the model and a voice now (the app does this off the UI thread after start-up).
    /// It also speaks one short sentence into nothing, which runs the model once (its first
    /// run is the slowest) and measures what a phrase costs on this machine, so the first reply
    /// is planned for it.
    pub fn warm_up(&self, voice: &str) -> Result<()> {
        let kokoro = self.kokoro.get()?;
        let style = self.style(voice)?;
        let mut phraser = Phraser::new(WARM_UP_SENTENCE, Dialect::American);
        if let Some(phrase) = phraser.next(LARGEST_PHRASE)? {
            let ids = kokoro.tokenize(&phrase.phonemes);
            let t = Instant::now();
            let audio = kokoro.synthesize(&ids, &style, 1.0, None)?;
            let synth_s = t.elapsed().as_secs_f64();
            let speech = trim_edges(audio, 0.02, 0.03);
            self.pace.lock().unwrap_or_else(|p| p.into_inner()).learn(
                phrase.phonemes.chars().count(),
                synth_s,
                speech.len() as f64 / SAMPLE_RATE as f64,
            );
        }
        kokoro.release_working_memory(&style)?;
        Ok(())
    }

    pub fn is_loaded(&self) -> bool {
        self.kokoro.is_loaded()
    }

    fn style(&self, id: &str) -> Result<Arc<VoiceStyle>> {
        let mut styles = self.styles.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = styles.get(id) {
            return Ok(s.clone());
        }
        let s = Arc::new(VoiceStyle::load(id)?);
        styles.insert(id.to_string(), s.clone());
        Ok(s)
    }

    /// What a peer needs to run the same model on the same input as this voice's first phrase
    /// of `text` when in no hurry (the largest phrase, as `warm_up` takes it): its phonemes, its
    /// token ids, and the voice's style file (scripts/bench-peers.sh).
    pub fn first_phrase(
        &self,
        text: &str,
        voice: &str,
    ) -> Result<(String, Vec<i64>, std::path::PathBuf)> {
        self.style(voice)?;
        let kokoro = self.kokoro.get()?;
        let dialect = if voice.starts_with('b') {
            Dialect::British
        } else {
            Dialect::American
        };
        let phrase = Phraser::new(&text::clean(text), dialect)
            .next(LARGEST_PHRASE)?
            .ok_or_else(|| Error::InvalidInput("there is nothing to read aloud".into()))?;
        let ids = kokoro.tokenize(&phrase.phonemes);
        let file = crate::models::resolve(&kokoro::voice_file(voice))?;
        Ok((phrase.phonemes, ids, file))
    }

    /// Start speaking `text`. Returns once the work is under way; errors that can be known
    /// up front (nothing to say, unknown voice, missing model) come back here.
    pub fn speak(&self, text: &str, opts: &SpeakOptions, output: Output) -> Result<Speech> {
        let cleaned = text::clean(text);
        if !cleaned.chars().any(|c| c.is_alphanumeric()) {
            return Err(Error::InvalidInput(
                "there is nothing to read aloud: the text has no words".into(),
            ));
        }
        let t0 = Instant::now();
        let voice = self.style(&opts.voice)?;
        let kokoro = self.kokoro.get()?;
        let dialect = if opts.voice.starts_with('b') {
            Dialect::British
        } else {
            Dialect::American
        };
        let speed = opts.speed.clamp(0.5, 2.0);
        let state = Arc::new(PlayState::default());
        let cancel = Arc::new(RunOptions::new().map_err(|e| Error::ModelLoad {
            name: "ONNX Runtime".into(),
            detail: e.to_string(),
        })?);
        let (tx, rx) = mpsc::channel::<Vec<f32>>();
        let phraser = Phraser::new(&cleaned, dialect);

        let synth_state = state.clone();
        let synth_cancel = cancel.clone();
        let pace = self.pace.clone();
        let streaming = output != Output::Collect && optimisations::enabled();
        let synth = std::thread::Builder::new()
            .name("umwelt-voice".into())
            .spawn(move || {
                synthesise(
                    phraser,
                    &kokoro,
                    &voice,
                    speed,
                    streaming,
                    &pace,
                    &synth_state,
                    &synth_cancel,
                    tx,
                )
            })
            .map_err(|e| Error::Audio(format!("could not start the voice thread: {e}")))?;

        let player = start_player(output, rx, state.clone())?;
        Ok(Speech {
            t0,
            state,
            cancel: Some(cancel),
            synth: Some(synth),
            player: Some(player),
        })
    }

    /// Play a recording (any format [`crate::speech::file`] reads) on `output`, the way a reply
    /// plays: a [`Speech`] to wait on or stop. It is decoded as it plays, a few seconds ahead,
    /// so an hour's recording takes no more memory than a minute's.
    pub fn play_recording(&self, path: &Path, output: Output) -> Result<Speech> {
        let mut file = crate::speech::AudioFile::open(path)?;
        let t0 = Instant::now();
        let state = Arc::new(PlayState::default());
        let (tx, rx) = mpsc::channel::<Vec<f32>>();
        let decode_state = state.clone();
        // Collecting (no device pulls at the pace of playback): decode straight through.
        let paced = output != Output::Collect;
        let decoder = std::thread::Builder::new()
            .name("umwelt-recording".into())
            .spawn(move || -> Result<SynthStats> {
                let mut stats = SynthStats {
                    synth_ms: 0.0,
                    audio_samples: 0,
                    phrases: 0,
                    planned_pause_ms: 0.0,
                };
                let ahead = (RECORDING_AHEAD_S * SAMPLE_RATE as f32) as u64;
                let mut resampler =
                    crate::audio::StreamResampler::new(crate::audio::SAMPLE_RATE, SAMPLE_RATE)?;
                let send = |block: Vec<f32>, stats: &mut SynthStats| {
                    stats.audio_samples += block.len();
                    tx.send(block).is_ok()
                };
                while let Some(block) = file.next_block()? {
                    while paced
                        && stats.audio_samples as u64
                            > decode_state.played.load(Ordering::Relaxed) + ahead
                        && !decode_state.stop.load(Ordering::Relaxed)
                    {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    if decode_state.stop.load(Ordering::Relaxed)
                        || !send(resampler.push(&block)?, &mut stats)
                    {
                        return Ok(stats);
                    }
                }
                send(resampler.finish()?, &mut stats);
                Ok(stats)
            })
            .map_err(|e| Error::Audio(format!("could not start the playback thread: {e}")))?;
        let player = start_player(output, rx, state.clone())?;
        Ok(Speech {
            t0,
            state,
            // No model runs: stopping the queue is enough (and ONNX Runtime need not be loaded).
            cancel: None,
            synth: Some(decoder),
            player: Some(player),
        })
    }
}

/// How far ahead of playback a recording is decoded (seconds).
const RECORDING_AHEAD_S: f32 = 5.0;

/// The thread that takes the queue's samples to `output`.
fn start_player(
    output: Output,
    rx: mpsc::Receiver<Vec<f32>>,
    play_state: Arc<PlayState>,
) -> Result<JoinHandle<Result<Vec<f32>>>> {
    let player: JoinHandle<Result<Vec<f32>>> = match output {
        Output::Device(name) => std::thread::Builder::new()
            .name("umwelt-playback".into())
            .spawn(move || {
                playback::play_on_device(StreamSource::new(rx, play_state), name.as_deref())
                    .map(|_| Vec::new())
            }),
        Output::Paced => std::thread::Builder::new()
            .name("umwelt-playback".into())
            .spawn(move || Ok(playback::paced(StreamSource::new(rx, play_state)))),
        Output::Collect => {
            drop(play_state);
            std::thread::Builder::new()
                .name("umwelt-playback".into())
                .spawn(move || Ok(rx.iter().flatten().collect()))
        }
    }
    .map_err(|e| Error::Audio(format!("could not start the playback thread: {e}")))?;
    Ok(player)
}

struct SynthStats {
    synth_ms: f64,
    audio_samples: usize,
    phrases: u32,
    planned_pause_ms: f64,
}

/// The synthesis loop: phrase after phrase into the queue, each sized from what is waiting.
#[allow(clippy::too_many_arguments)]
fn synthesise(
    mut phraser: Phraser,
    kokoro: &Kokoro,
    voice: &VoiceStyle,
    speed: f32,
    streaming: bool,
    learned: &Mutex<Pace>,
    state: &PlayState,
    cancel: &RunOptions,
    tx: mpsc::Sender<Vec<f32>>,
) -> Result<SynthStats> {
    let mut stats = SynthStats {
        synth_ms: 0.0,
        audio_samples: 0,
        phrases: 0,
        planned_pause_ms: 0.0,
    };
    let mut queued = 0u64; // samples sent, pauses included
    let mut rtf = 0.5f64;
    let mut pace = *learned.lock().unwrap_or_else(|p| p.into_inner());
    let mut joining = false; // the previous phrase was cut mid-clause
                             // UMWELT_VOICE_TRACE=1 prints each phrase's budget and timing to stderr.
    let trace = std::env::var_os("UMWELT_VOICE_TRACE").is_some();
    loop {
        if state.stop.load(Ordering::Relaxed) {
            break;
        }
        // Time left before the queue runs dry: what is queued and not yet taken by the output.
        // (The device takes its buffer's worth at once when it starts, then keeps pace.)
        let left =
            queued.saturating_sub(state.played.load(Ordering::Relaxed)) as f64 / SAMPLE_RATE as f64;
        let budget = if !streaming {
            LARGEST_PHRASE
        } else if stats.phrases == 0 {
            pace.first_budget()
        } else {
            pace.budget(left)
        };
        let Some(phrase) = phraser.next(budget)? else {
            break;
        };
        let symbols = phrase.phonemes.chars().count();
        if streaming && stats.phrases > 0 {
            // If this phrase cannot be ready before the queue runs dry, say so now with a short
            // pause between two words, rather than let the device starve.
            let pause = pace.pause_before(symbols, left);
            if pause > 0.0 {
                let pause = vec![0.0; (pause * SAMPLE_RATE as f64) as usize];
                stats.planned_pause_ms += pause.len() as f64 * 1e3 / SAMPLE_RATE as f64;
                queued += pause.len() as u64;
                if tx.send(pause).is_err() {
                    break;
                }
            }
        }
        let ids = kokoro.tokenize(&phrase.phonemes);
        if ids.is_empty() {
            continue;
        }
        let t = Instant::now();
        let audio = match kokoro.synthesize(&ids, voice, speed, Some(cancel)) {
            Ok(a) => a,
            Err(Error::Cancelled) => break,
            Err(e) => return Err(e),
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        stats.synth_ms += ms;
        stats.phrases += 1;
        if !audio.is_empty() {
            rtf = ms / 1e3 / (audio.len() as f64 / SAMPLE_RATE as f64);
        }
        stats.audio_samples += audio.len();
        if trace {
            let ahead = queued.saturating_sub(state.played.load(Ordering::Relaxed)) as f64
                / SAMPLE_RATE as f64;
            eprintln!(
                "voice: phrase {} budget {budget} {:?}: {ms:.0} ms for {:.2} s (rtf {rtf:.2}), {ahead:.2} s was queued, first sound {:?}",
                stats.phrases,
                phrase.phonemes,
                audio.len() as f64 / SAMPLE_RATE as f64,
                state.first_sample().map(|t| t.elapsed()),
            );
        }
        let audio = trim_edges(
            audio,
            if joining { 0.005 } else { 0.02 },
            if phrase.continues { 0.005 } else { 0.03 },
        );
        joining = phrase.continues;
        if !audio.is_empty() {
            pace.learn(symbols, ms / 1e3, audio.len() as f64 / SAMPLE_RATE as f64);
        }
        queued += audio.len() as u64;
        if tx.send(audio).is_err() {
            break; // the player is gone (stopped)
        }
        if phrase.pause_ms > 0 && !phraser.is_done() {
            let pause = vec![0.0; (SAMPLE_RATE * phrase.pause_ms / 1000) as usize];
            queued += pause.len() as u64;
            if tx.send(pause).is_err() {
                break;
            }
        }
    }
    if streaming {
        *learned.lock().unwrap_or_else(|p| p.into_inner()) = pace;
    }
    if stats.phrases > 0 {
        kokoro.release_working_memory(voice)?;
    }
    Ok(stats)
}

/// Cut the silence Kokoro leaves at a phrase's edges, keeping `lead` and `tail` seconds of it.
fn trim_edges(audio: Vec<f32>, lead: f32, tail: f32) -> Vec<f32> {
    let Some(first) = audio.iter().position(|x| x.abs() > EDGE_SILENCE) else {
        return Vec::new();
    };
    let last = audio
        .iter()
        .rposition(|x| x.abs() > EDGE_SILENCE)
        .unwrap_or(first);
    let from = first.saturating_sub((lead * SAMPLE_RATE as f32) as usize);
    let to = (last + 1 + (tail * SAMPLE_RATE as f32) as usize).min(audio.len());
    audio[from..to].to_vec()
}

/// A reply being spoken.
pub struct Speech {
    t0: Instant,
    state: Arc<PlayState>,
    /// The model run to cancel on Stop (a recording has none).
    cancel: Option<Arc<RunOptions>>,
    synth: Option<JoinHandle<Result<SynthStats>>>,
    player: Option<JoinHandle<Result<Vec<f32>>>>,
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

/// Write 24 kHz mono samples as a 16-bit WAV file.
pub fn write_wav(path: &Path, samples: &[f32]) -> Result<()> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let err = |e: hound::Error| Error::Audio(format!("could not write {}: {e}", path.display()));
    let mut w = hound::WavWriter::create(path, spec).map_err(err)?;
    for s in samples {
        w.write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16)
            .map_err(err)?;
    }
    w.finalize().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_trimmed_to_the_margins_asked_for() {
        let mut a = vec![0.0; 24_000];
        a[12_000..12_480].iter_mut().for_each(|x| *x = 0.5);
        let t = trim_edges(a, 0.01, 0.02);
        assert_eq!(t.len(), 240 + 480 + 480);
        assert!(trim_edges(vec![0.0; 100], 0.01, 0.01).is_empty());
    }
}
