//! Synthesis: the thread that turns a reply's phrases into audio, one phrase ahead of
//! playback, each phrase sized from the audio already waiting.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Instant;

use ort::session::RunOptions;

use super::kokoro::{Kokoro, VoiceStyle, SAMPLE_RATE};
use super::pace::{Pace, LARGEST_PHRASE};
use super::playback::PlayState;
use super::text::Phraser;
use crate::error::{Error, Result};

/// Amplitude under which a phrase's edges count as silence (trimmed, then pauses are ours).
const EDGE_SILENCE: f32 = 0.004;

/// What one reading took to make (or, for a recording, to decode).
pub(super) struct SynthStats {
    pub(super) synth_ms: f64,
    pub(super) audio_samples: usize,
    pub(super) phrases: u32,
    pub(super) planned_pause_ms: f64,
}

/// The synthesis loop: phrase after phrase into the queue, each sized from what is waiting.
#[allow(clippy::too_many_arguments)]
pub(super) fn synthesise(
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
pub(super) fn trim_edges(audio: Vec<f32>, lead: f32, tail: f32) -> Vec<f32> {
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
