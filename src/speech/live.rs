//! Hearing a dictation while it is spoken: audio goes through the voice activity detector
//! ([`super::segmenter`]); each segment is transcribed as soon as its pause comes, and the
//! segment still being spoken is transcribed again every [`PARTIAL_STEP_S`] for a partial text
//! that the final one replaces. When the user stops, only the last segment is left to transcribe.
//!
//! [`Listener`] does the work on whatever thread calls it (a test, the recovery of a spool);
//! [`listen`] runs one on the `umwelt-listen` thread, fed by the recorder.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::audio::{StreamResampler, SAMPLE_RATE};
use crate::error::{Error, Result};
use crate::speech::segmenter::Segmenter;
use crate::speech::transcriber::{Decoding, LazyTranscriber, Transcriber, Workspace};
use crate::speech::vad::{LazyVad, Vad};

/// The open segment is transcribed again once it has grown by this much (seconds).
pub const PARTIAL_STEP_S: f32 = 0.5;

/// What has been heard of a dictation so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Heard {
    /// The final text of every segment finished so far.
    pub text: String,
    /// The provisional text of the segment being spoken (replaced as it grows, then by its final).
    pub partial: String,
    /// Seconds of audio heard.
    pub seconds: f32,
    /// Segments (stretches of speech between pauses) finished so far.
    pub segments: u32,
}

/// What turns audio into text: the voice activity detector, whisper, and how whisper decodes.
#[derive(Clone)]
pub struct Ears {
    pub vad: Arc<Vad>,
    pub transcriber: Arc<Transcriber>,
    pub decoding: Decoding,
}

impl Ears {
    /// The default models (Silero VAD, whisper tiny.en) and decoding, loaded now.
    pub fn load() -> Result<Ears> {
        Ok(Ears {
            vad: Arc::new(Vad::load()?),
            transcriber: Arc::new(Transcriber::load()?),
            decoding: Decoding::default(),
        })
    }

    /// The models a program keeps loaded on demand (loading each now if it is not, or was
    /// unloaded when idle), decoding as asked. The one way the app makes its `Ears`.
    pub fn from_loaded(
        vad: &LazyVad,
        transcriber: &LazyTranscriber,
        decoding: Decoding,
    ) -> Result<Ears> {
        Ok(Ears {
            vad: vad.get()?,
            transcriber: transcriber.get()?,
            decoding,
        })
    }

    pub fn listener(&self) -> Listener {
        Listener::new(&self.vad, self.transcriber.clone(), self.decoding.clone())
    }
}

/// Turns 16 kHz audio into text, segment by segment.
pub struct Listener {
    segmenter: Segmenter,
    transcriber: Arc<Transcriber>,
    /// Whisper's memory, kept from the first decode of the dictation to its end.
    work: Workspace,
    decoding: Decoding,
    texts: Vec<String>,
    segments: u32,
    partial: String,
    /// Length of the open segment when it was last transcribed.
    partial_len: usize,
    /// The final text of the open segment, made while the speaker paused: (start, end, text).
    /// If the recording stops before more speech, it is the final text, ready at once.
    settled: Option<(usize, usize, String)>,
}

impl Listener {
    pub fn new(vad: &Arc<Vad>, transcriber: Arc<Transcriber>, decoding: Decoding) -> Listener {
        // Whisper's thread count follows the machine's load; start measuring it now.
        crate::optimisations::watch_load();
        Listener {
            segmenter: Segmenter::new(vad),
            transcriber,
            work: Workspace::default(),
            decoding,
            texts: Vec::new(),
            segments: 0,
            partial: String::new(),
            partial_len: 0,
            settled: None,
        }
    }

    /// Hear more audio. Segments it completes are transcribed now; returns whether the text
    /// changed.
    pub fn hear(&mut self, pcm: &[f32]) -> Result<bool> {
        let done = self.segmenter.push(pcm)?;
        let changed = !done.is_empty();
        for seg in done {
            self.add(seg.start, &seg.pcm)?;
        }
        Ok(changed)
    }

    fn add(&mut self, start: usize, pcm: &[f32]) -> Result<()> {
        let text = match self.settled.take() {
            Some((a, b, text)) if a == start && b - a == pcm.len() => text,
            _ => self
                .transcriber
                .transcribe_in(&mut self.work, pcm, &self.decoding)?,
        };
        self.segments += 1;
        if !text.is_empty() {
            self.texts.push(text);
        }
        self.partial.clear();
        self.partial_len = 0;
        Ok(())
    }

    /// Transcribe the segment being spoken if it grew by [`PARTIAL_STEP_S`] since the last
    /// time; returns whether the partial text changed.
    pub fn refresh_partial(&mut self) -> Result<bool> {
        // The speaker paused: make the segment's final text now, so that Stop finds it ready.
        // (An optimisation: `UMWELT_PERF=off` waits for Stop.)
        if let Some((a, b)) = self
            .segmenter
            .settled()
            .filter(|_| crate::optimisations::enabled())
        {
            if self.settled.as_ref().is_none_or(|s| (s.0, s.1) != (a, b)) {
                let open = self.segmenter.open().expect("settled implies open");
                let text = self.transcriber.transcribe_in(
                    &mut self.work,
                    &open[..b - a],
                    &self.decoding,
                )?;
                let changed = text != self.partial;
                self.partial = text.clone();
                self.partial_len = open.len();
                self.settled = Some((a, b, text));
                return Ok(changed);
            }
            return Ok(false);
        }
        let Some(open) = self.segmenter.open() else {
            return Ok(false);
        };
        if open.len() < self.partial_len + (PARTIAL_STEP_S * SAMPLE_RATE as f32) as usize {
            return Ok(false);
        }
        let len = open.len();
        // A partial is a glimpse: greedy and without fallback, whatever the final uses.
        let quick = Decoding {
            beam: 1,
            fallback: false,
            ..self.decoding.clone()
        };
        let text = self
            .transcriber
            .transcribe_in(&mut self.work, open, &quick)?;
        self.partial_len = len;
        let changed = text != self.partial;
        self.partial = text;
        Ok(changed)
    }

    /// What has been heard so far.
    pub fn heard(&self) -> Heard {
        Heard {
            text: self.texts.join(" "),
            partial: self.partial.clone(),
            seconds: self.segmenter.heard() as f32 / SAMPLE_RATE as f32,
            segments: self.segments,
        }
    }

    /// The audio ended: transcribe the last segment; the whole text.
    pub fn finish(mut self) -> Result<String> {
        if let Some(seg) = self.segmenter.finish() {
            self.add(seg.start, &seg.pcm)?;
        }
        Ok(self.texts.join(" "))
    }
}

/// Run `listener` on the `umwelt-listen` thread over the blocks `audio` brings (at `rate` Hz),
/// calling `on_heard` whenever the text changes. The thread ends when the sender is dropped (the
/// recording stopped) and returns the final text.
pub fn listen(
    audio: Receiver<Vec<f32>>,
    rate: u32,
    mut listener: Listener,
    mut on_heard: impl FnMut(&Heard) + Send + 'static,
) -> Result<JoinHandle<Result<String>>> {
    let mut resampler = StreamResampler::new(rate, SAMPLE_RATE)?;
    std::thread::Builder::new()
        .name("umwelt-listen".into())
        .spawn(move || {
            // A panic here (a bug) is the draft's problem, not a dead thread.
            crate::error::catch_panic("hearing the dictation", move || {
                let mut open = true;
                while open {
                    let Ok(block) = audio.recv() else {
                        break;
                    };
                    let mut blocks = vec![block];
                    // Catch up on everything waiting, so partials never build a backlog.
                    loop {
                        match audio.try_recv() {
                            Ok(b) => blocks.push(b),
                            Err(TryRecvError::Empty) => break,
                            Err(TryRecvError::Disconnected) => {
                                open = false;
                                break;
                            }
                        }
                    }
                    let mut changed = false;
                    for block in blocks {
                        let pcm = resampler.push(&block)?;
                        changed |= listener.hear(&pcm)?;
                    }
                    if open {
                        changed |= listener.refresh_partial()?;
                    }
                    if changed {
                        on_heard(&listener.heard());
                    }
                }
                let tail = resampler.finish()?;
                listener.hear(&tail)?;
                listener.finish()
            })
        })
        .map_err(|e| Error::io("starting the listening thread")(e))
}
