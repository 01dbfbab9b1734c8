//! Where speech is: a dictation cut into segments at its pauses, by the voice activity detector
//! ([`super::vad`]). Silence between segments is dropped; each segment keeps a little of the quiet
//! around it (the pre-roll: a soft first syllable is not clipped), and a segment that runs on
//! without a pause is cut at its quietest moment, never mid-word where a quieter point exists.
//!
//! Memory is bounded: only the segment being heard (at most [`MAX_SEGMENT_S`]) is held.

use std::sync::Arc;

use crate::audio::SAMPLE_RATE;
use crate::error::Result;
use crate::speech::vad::{Vad, VadStream, FRAME};

/// A frame at or above this probability is speech (Silero's own default).
const THRESHOLD: f32 = 0.5;
/// Once in speech, frames stay speech down to this probability (hysteresis).
const NEG_THRESHOLD: f32 = 0.35;
/// Quiet kept before the first speech frame and after the last (seconds).
pub const PAD_S: f32 = 0.3;
/// A pause this long ends a segment (seconds).
pub const PAUSE_S: f32 = 0.6;
/// Shortest speech that makes a segment (a cough or a click does not).
const MIN_SPEECH_S: f32 = 0.25;
/// A segment without a pause is cut once it is this long (whisper hears 30 s at most).
pub const MAX_SEGMENT_S: f32 = 20.0;
/// ... at its quietest frame after this much of it.
const MIN_CUT_S: f32 = 8.0;

fn samples(s: f32) -> usize {
    (s * SAMPLE_RATE as f32) as usize
}

/// One stretch of speech: its audio, and where it starts in the recording (in samples).
#[derive(Debug, Clone)]
pub struct Segment {
    pub start: usize,
    pub pcm: Vec<f32>,
}

impl Segment {
    pub fn seconds(&self) -> f32 {
        self.pcm.len() as f32 / SAMPLE_RATE as f32
    }
}

/// Cuts a stream of 16 kHz audio into [`Segment`]s.
pub struct Segmenter {
    vad: VadStream,
    /// Audio from `buf_start` (a sample index of the recording) onwards.
    buf: Vec<f32>,
    buf_start: usize,
    /// Frames judged so far.
    frames: usize,
    speech: Option<Open>,
}

/// The segment being heard.
struct Open {
    start: usize,
    /// The frame after the last speech frame.
    last_speech_end: usize,
    speech_frames: usize,
    /// Quietest frame so far (probability, frame index), past `MIN_CUT_S`: where to cut a
    /// segment that runs too long.
    quietest: Option<(f32, usize)>,
}

impl Segmenter {
    pub fn new(vad: &Arc<Vad>) -> Segmenter {
        Segmenter {
            vad: vad.stream(),
            buf: Vec::new(),
            buf_start: 0,
            frames: 0,
            speech: None,
        }
    }

    /// Samples heard so far.
    pub fn heard(&self) -> usize {
        self.buf_start + self.buf.len()
    }

    /// Hear more audio; returns the segments it completed.
    pub fn push(&mut self, pcm: &[f32]) -> Result<Vec<Segment>> {
        self.buf.extend_from_slice(pcm);
        let probs = self.vad.push(pcm)?;
        let mut done = Vec::new();
        for p in probs {
            let f = self.frames;
            self.frames += 1;
            self.judge(f, p, &mut done);
        }
        if self.speech.is_none() {
            // Idle: keep only the pre-roll.
            let keep = samples(PAD_S) + FRAME;
            if self.buf.len() > keep {
                let cut = self.buf.len() - keep;
                self.buf.drain(..cut);
                self.buf_start += cut;
            }
        }
        Ok(done)
    }

    fn judge(&mut self, f: usize, p: f32, done: &mut Vec<Segment>) {
        let frame_end = (f + 1) * FRAME;
        match &mut self.speech {
            None => {
                if p >= THRESHOLD {
                    self.speech = Some(Open {
                        start: (f * FRAME)
                            .saturating_sub(samples(PAD_S))
                            .max(self.buf_start),
                        last_speech_end: frame_end,
                        speech_frames: 1,
                        quietest: None,
                    });
                }
            }
            Some(open) => {
                if p >= NEG_THRESHOLD {
                    open.last_speech_end = frame_end;
                    if p >= THRESHOLD {
                        open.speech_frames += 1;
                    }
                }
                if f * FRAME >= open.start + samples(MIN_CUT_S)
                    && open.quietest.is_none_or(|(q, _)| p < q)
                {
                    open.quietest = Some((p, f));
                }
                if frame_end - open.last_speech_end >= samples(PAUSE_S) {
                    let end = open.last_speech_end + samples(PAD_S);
                    self.close(end, done);
                } else if frame_end - open.start >= samples(MAX_SEGMENT_S) {
                    // No pause for too long: cut at the quietest frame seen (its middle).
                    let cut = match open.quietest {
                        Some((_, q)) => q * FRAME + FRAME / 2,
                        None => frame_end,
                    };
                    self.close(cut, done);
                    self.speech = Some(Open {
                        start: cut,
                        last_speech_end: frame_end,
                        speech_frames: 1,
                        quietest: None,
                    });
                }
            }
        }
    }

    /// End the open segment at sample `end` (clamped to what was heard).
    fn close(&mut self, end: usize, done: &mut Vec<Segment>) {
        let Some(open) = self.speech.take() else {
            return;
        };
        let end = end.min(self.heard());
        let (a, b) = (open.start - self.buf_start, end - self.buf_start);
        if open.speech_frames * FRAME >= samples(MIN_SPEECH_S) && b > a {
            done.push(Segment {
                start: open.start,
                pcm: self.buf[a..b].to_vec(),
            });
        }
        self.buf.drain(..b);
        self.buf_start = end;
    }

    /// The segment being heard, so far (for a partial transcript), if speech is under way.
    pub fn open(&self) -> Option<&[f32]> {
        let open = self.speech.as_ref()?;
        Some(&self.buf[open.start - self.buf_start..])
    }

    /// Where the segment under way would end if the recording stopped now, once its speech has
    /// been followed by at least the pad of quiet: (its start, its end). `None` while speech
    /// goes on (or there is none).
    pub fn settled(&self) -> Option<(usize, usize)> {
        let open = self.speech.as_ref()?;
        let end = open.last_speech_end + samples(PAD_S);
        (self.frames * FRAME >= end).then_some((open.start, end))
    }

    /// The recording ended: the segment under way, if it holds speech.
    pub fn finish(&mut self) -> Option<Segment> {
        let mut done = Vec::new();
        let judged = self.frames * FRAME;
        let end = self.speech.as_ref().map(|o| {
            if o.last_speech_end == judged {
                // Speech to the last judged frame: keep the unjudged tail (under 32 ms) too.
                self.heard()
            } else {
                o.last_speech_end + samples(PAD_S)
            }
        });
        if let Some(end) = end {
            self.close(end, &mut done);
        }
        done.pop()
    }
}
