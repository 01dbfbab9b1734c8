//! The speaker: the one owner of the voice model and the voices it has read. It starts a
//! reading ([`Speaker::speak`], [`Speaker::play_recording`]) and hands back the [`Speech`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ort::session::RunOptions;
use serde::{Deserialize, Serialize};

use super::kokoro::{self, Kokoro, VoiceStyle, SAMPLE_RATE};
use super::pace::{Pace, LARGEST_PHRASE};
use super::phonemes::Dialect;
use super::playback::{start_player, Output, PlayState};
use super::reading::Speech;
use super::synthesis::{synthesise, trim_edges, SynthStats};
use super::text::{self, Phraser};
use crate::error::{Error, Result};
use crate::lazy::Lazy;
use crate::optimisations;

/// The voice used when the user has not picked one.
pub const DEFAULT_VOICE: &str = "af_heart";
/// What [`Speaker::warm_up`] synthesises (and nobody hears) to measure the machine.
const WARM_UP_SENTENCE: &str = "Here is what you told me.";
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
    /// so an hour's recording takes no more memory than a minute's. A sealed recording opens
    /// with `seal` (the memory file's, [`crate::Store::seal`]).
    pub fn play_recording(
        &self,
        path: &Path,
        seal: Option<&crate::sealed::Seal>,
        output: Output,
    ) -> Result<Speech> {
        let mut file = crate::speech::AudioFile::open_sealed(path, seal)?;
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
