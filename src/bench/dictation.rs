//! The dictation set: committed utterances (`benches/data/dictation.txt`) spoken by two kinds of
//! voice, transcribed, and scored by word error rate. Used by the `stt_wer_*` scenarios, by
//! `umwelt-cli wer` (which compares decoding choices) and by the accuracy tests.
//!
//! The audio is made on the machine at run time from the committed text: espeak-ng's formant
//! voices at several speeds (robotic, the hard case) and Kokoro's neural voices (close to a
//! person). Both are deterministic, so every run scores the same audio.

use std::time::Instant;

use crate::audio::{self, SAMPLE_RATE};
use crate::error::{Error, Result};
use crate::speech::live::{self, Ears};
use crate::speech::transcriber::{Decoding, Transcriber};
use crate::speech::wer;
use crate::voice::{phonemes, Output, SpeakOptions, Speaker};

const SET: &str = include_str!("../../benches/data/dictation.txt");

/// The committed utterances, in order.
pub fn utterances() -> Vec<&'static str> {
    SET.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("vocabulary:"))
        .collect()
}

/// The set's vocabulary line: the names and jargon its utterances use.
pub fn vocabulary() -> &'static str {
    SET.lines()
        .find_map(|l| l.strip_prefix("vocabulary:"))
        .unwrap_or("")
        .trim()
}

/// Which kind of voice speaks the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoiceKind {
    /// espeak-ng's formant synthesiser, four voices at 150–210 words a minute.
    Formant,
    /// Kokoro, four voices (American and British, women and men).
    Neural,
}

impl VoiceKind {
    pub fn name(self) -> &'static str {
        match self {
            VoiceKind::Formant => "formant (espeak-ng)",
            VoiceKind::Neural => "neural (Kokoro)",
        }
    }
}

/// espeak voices and speeds, taken in turn.
const FORMANT_VOICES: &[(&str, u32)] = &[
    ("en-us", 150),
    ("en", 175),
    ("en-us+m3", 210),
    ("en+f3", 165),
];
/// Kokoro voices, taken in turn.
const NEURAL_VOICES: &[&str] = &["af_heart", "am_michael", "bf_emma", "bm_george"];

/// One spoken utterance, 16 kHz mono.
pub struct Clip {
    pub text: &'static str,
    pub voice: String,
    pub pcm: Vec<f32>,
}

/// Speak the whole set (or its first `limit` utterances) with `kind`.
pub fn clips(kind: VoiceKind, limit: Option<usize>) -> Result<Vec<Clip>> {
    let texts = utterances();
    let n = limit.unwrap_or(texts.len()).min(texts.len());
    let speaker = (kind == VoiceKind::Neural).then(Speaker::new);
    let mut out = Vec::with_capacity(n);
    for (i, text) in texts.into_iter().take(n).enumerate() {
        let (voice, pcm) = match kind {
            VoiceKind::Formant => {
                let (v, wpm) = FORMANT_VOICES[i % FORMANT_VOICES.len()];
                let (samples, rate) = phonemes::formant_speech(text, v, wpm)?;
                (
                    format!("{v} at {wpm} wpm"),
                    audio::resample(&samples, rate, SAMPLE_RATE)?,
                )
            }
            VoiceKind::Neural => {
                let v = NEURAL_VOICES[i % NEURAL_VOICES.len()];
                let opts = SpeakOptions {
                    voice: v.into(),
                    speed: 1.0,
                };
                let speaker = speaker.as_ref().expect("made for the neural kind");
                let r = speaker.speak(text, &opts, Output::Collect)?.wait()?;
                (
                    v.to_string(),
                    audio::resample(&r.samples, 24_000, SAMPLE_RATE)?,
                )
            }
        };
        if pcm.is_empty() {
            return Err(Error::Audio(format!(
                "the voice {voice} said nothing for {text:?}"
            )));
        }
        out.push(Clip { text, voice, pcm });
    }
    Ok(out)
}

/// How a set of clips was heard.
#[derive(Debug, Clone)]
pub struct Scored {
    /// Word errors over all reference words (corpus word error rate), 0..1 (or more).
    pub wer: f64,
    /// Per clip: milliseconds whisper took.
    pub ms: Vec<f64>,
    /// Per clip: what was heard.
    pub heard: Vec<String>,
}

/// Transcribe every clip with `how` and score the lot.
pub fn score(t: &Transcriber, clips: &[Clip], how: &Decoding) -> Result<Scored> {
    let mut pairs = Vec::with_capacity(clips.len());
    let mut ms = Vec::with_capacity(clips.len());
    let mut heard = Vec::with_capacity(clips.len());
    for c in clips {
        let t0 = Instant::now();
        let h = t.transcribe_with(&c.pcm, how)?;
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        pairs.push((c.text.to_string(), h.clone()));
        heard.push(h);
    }
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Ok(Scored {
        wer: wer::corpus_wer(refs),
        ms,
        heard,
    })
}

/// A reply of four sentences read aloud, long enough for streaming to matter (the voice
/// scenarios and the memory probe's speaking).
pub const SPEAK_REPLY: &str = "Here is what you told me. The dentist moved your appointment to Thursday at nine, after lunch. \
                           Bring the insurance card and the new address. Anna will pick you up at the corner afterwards.";

/// A sentence of about five seconds (the end-of-speech scenario).
pub const FIVE_SECONDS: &str =
    "The dentist moved my appointment to Thursday at nine in the morning, right after lunch.";

/// `text` in Kokoro's default voice as 16 kHz mono.
pub fn neural(text: &str) -> Result<Vec<f32>> {
    neural_by(&Speaker::new(), text)
}

/// [`neural`] by a speaker already loaded.
pub fn neural_by(speaker: &Speaker, text: &str) -> Result<Vec<f32>> {
    let r = speaker
        .speak(text, &SpeakOptions::default(), Output::Collect)?
        .wait()?;
    audio::resample(&r.samples, 24_000, SAMPLE_RATE)
}

/// What one live dictation, fed at the pace of speech, took.
#[derive(Debug, Clone)]
pub struct LiveTiming {
    /// From the first sample of speech to the first text shown (partial or final).
    pub first_text_ms: Option<f64>,
    /// From Stop to the final text.
    pub final_ms: f64,
    pub text: String,
}

/// Feed `lead` seconds of quiet, `speech`, then `tail` seconds of quiet to a live listener in
/// quarter-second blocks at real-time pace (as the recorder does), press Stop, and time it.
pub fn live_dictation(ears: &Ears, speech: &[f32], lead: f32, tail: f32) -> Result<LiveTiming> {
    use std::sync::{mpsc, Arc, Mutex};
    let quiet = |s: f32| vec![0.0f32; (s * SAMPLE_RATE as f32) as usize];
    let pcm = [quiet(lead), speech.to_vec(), quiet(tail)].concat();
    let block = SAMPLE_RATE as usize / 4;
    let (tx, rx) = mpsc::channel();
    let first: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let f = first.clone();
    let thread = live::listen(rx, SAMPLE_RATE, ears.listener(), move |h| {
        if !(h.text.is_empty() && h.partial.is_empty()) {
            f.lock().unwrap().get_or_insert_with(Instant::now);
        }
    })?;
    let t0 = Instant::now();
    let speech_at = t0 + std::time::Duration::from_secs_f32(lead);
    for (i, b) in pcm.chunks(block).enumerate() {
        // A block is delivered once it has been spoken.
        let due = t0 + std::time::Duration::from_secs_f32((i + 1) as f32 * 0.25);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        // The listener ends early only if it failed, which the run reports below.
        let _listener_gone = tx.send(b.to_vec());
    }
    let stop = Instant::now();
    drop(tx);
    let text = thread
        .join()
        .map_err(|_| Error::Audio("the listening thread crashed".into()))??;
    let final_ms = stop.elapsed().as_secs_f64() * 1e3;
    let first_text_ms = first
        .lock()
        .unwrap()
        .map(|t| t.saturating_duration_since(speech_at).as_secs_f64() * 1e3);
    Ok(LiveTiming {
        first_text_ms,
        final_ms,
        text,
    })
}

/// Another process that keeps one core busy until dropped (a shell spinning in a loop).
pub struct BusyCore(std::process::Child);

impl BusyCore {
    pub fn start() -> Result<BusyCore> {
        let child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .map_err(Error::io("starting a busy process"))?;
        // Let it be scheduled before the measurement starts.
        std::thread::sleep(std::time::Duration::from_millis(300));
        Ok(BusyCore(child))
    }
}

impl Drop for BusyCore {
    fn drop(&mut self) {
        if let Err(e) = self.0.kill().and_then(|_| self.0.wait().map(|_| ())) {
            tracing::warn!("stopping the busy-core process: {e}");
        }
    }
}

/// Resident memory of this process (MiB), from `/proc/self/status`.
pub fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// An hour of dictation (a sentence every half minute) spooled to disk and heard by a listener
/// as the recorder would, then turned into a WAV as Stop does. Returns how much resident memory
/// grew between minute 10 and the end (MiB): flat is 0.
pub fn hour_of_dictation(ears: &Ears, dir: &std::path::Path) -> Result<f64> {
    use crate::speech::spool::SpoolWriter;
    let sentence = neural(FIVE_SECONDS)?;
    let mut period = sentence.clone();
    period.resize(30 * SAMPLE_RATE as usize, 0.0);
    let mut writer = SpoolWriter::create(dir, SAMPLE_RATE, crate::sealed::Seal::for_tests())?;
    let mut listener = ears.listener();
    let mut at_ten = f64::NAN;
    let mut peak = 0f64;
    for half_minute in 0..120 {
        for chunk in period.chunks(SAMPLE_RATE as usize / 4) {
            writer.append(chunk)?;
            listener.hear(chunk)?;
        }
        let rss = rss_mib();
        if half_minute == 19 {
            at_ten = rss;
        }
        if half_minute >= 19 {
            peak = peak.max(rss);
        }
    }
    let text = listener.finish()?;
    if wer::word_error_rate(&FIVE_SECONDS.repeat(120), &text) > 0.5 {
        return Err(Error::Audio(format!(
            "an hour of dictation was mostly not heard: {}",
            &text[..text.len().min(200)]
        )));
    }
    let spool = writer.path().to_path_buf();
    drop(writer);
    let wav = crate::speech::DictationDrafts::new(dir).spool_to_wav(&spool)?;
    peak = peak.max(rss_mib());
    for f in [wav, spool] {
        if let Err(e) = std::fs::remove_file(&f) {
            tracing::warn!("removing the bench recording {}: {e}", f.display());
        }
    }
    Ok(peak - at_ten)
}
