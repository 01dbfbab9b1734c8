//! Streamed playback: phrases go into a queue as they are synthesised; the output device pulls
//! samples from it. The queue notes when the device takes its first sample (the latency the
//! user hears), counts underruns (the device asked while the next phrase was not ready) and
//! stops at once when asked.
//!
//! Two sinks pull from the same [`StreamSource`]: the real device through rodio (cpal), and a
//! [`paced`] consumer that pulls in 10 ms blocks at real-time pace, for the harness on machines
//! without a sound card. Both see the same queue, so both count the same underruns. A third,
//! [`Output::Collect`], keeps every sample for a file ([`write_wav`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait};

use super::kokoro::SAMPLE_RATE;
use crate::error::{Error, Result};

/// What the queue and its pullers share.
#[derive(Default)]
pub struct PlayState {
    pub stop: AtomicBool,
    first_sample: OnceLock<Instant>,
    pub underruns: AtomicU32,
    /// Samples the device has taken.
    pub played: AtomicU64,
    done: Mutex<bool>,
    done_cv: Condvar,
}

impl PlayState {
    /// When the device took the first synthesised sample.
    pub fn first_sample(&self) -> Option<Instant> {
        self.first_sample.get().copied()
    }

    fn finish(&self) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.done_cv.notify_all();
    }

    /// Wait until the source has ended (all played, or stopped).
    pub fn wait_done(&self) {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        while !*done {
            done = self.done_cv.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The device's end of the queue.
pub struct StreamSource {
    rx: Receiver<Vec<f32>>,
    cur: Vec<f32>,
    pos: usize,
    state: Arc<PlayState>,
    in_gap: bool,
    ended: bool,
}

impl StreamSource {
    pub fn new(rx: Receiver<Vec<f32>>, state: Arc<PlayState>) -> StreamSource {
        StreamSource {
            rx,
            cur: Vec::new(),
            pos: 0,
            state,
            in_gap: false,
            ended: false,
        }
    }

    fn end(&mut self) -> Option<f32> {
        if !self.ended {
            self.ended = true;
            self.state.finish();
        }
        None
    }
}

impl Iterator for StreamSource {
    type Item = f32;

    fn next(&mut self) -> Option<f32> {
        if self.ended || self.state.stop.load(Ordering::Relaxed) {
            return self.end();
        }
        loop {
            if let Some(&s) = self.cur.get(self.pos) {
                self.pos += 1;
                if self.pos == 1 || self.in_gap {
                    self.state.first_sample.get_or_init(Instant::now);
                    self.in_gap = false;
                }
                self.state.played.fetch_add(1, Ordering::Relaxed);
                return Some(s);
            }
            match self.rx.try_recv() {
                Ok(block) => {
                    self.cur = block;
                    self.pos = 0;
                }
                Err(TryRecvError::Empty) => {
                    // The device wants audio and the next phrase is not ready: an underrun
                    // (once playback has begun; before it, this is the start-up wait).
                    if self.state.first_sample().is_some() && !self.in_gap {
                        self.state.underruns.fetch_add(1, Ordering::Relaxed);
                        self.in_gap = true;
                    }
                    return Some(0.0);
                }
                Err(TryRecvError::Disconnected) => return self.end(),
            }
        }
    }
}

impl Drop for StreamSource {
    fn drop(&mut self) {
        self.end();
    }
}

impl rodio::Source for StreamSource {
    fn current_span_len(&self) -> Option<usize> {
        None
    }
    fn channels(&self) -> u16 {
        1
    }
    fn sample_rate(&self) -> u32 {
        SAMPLE_RATE
    }
    fn total_duration(&self) -> Option<Duration> {
        None
    }
}

/// Output devices the user can pick (names as ALSA/cpal give them).
pub fn output_devices() -> Result<Vec<String>> {
    let host = cpal::default_host();
    let devices = host
        .output_devices()
        .map_err(|e| Error::Audio(format!("could not list the speakers: {e}")))?;
    Ok(devices.filter_map(|d| d.name().ok()).collect())
}

/// Play `source` on the named device (or the default one) until it ends or is stopped.
pub fn play_on_device(source: StreamSource, device: Option<&str>) -> Result<()> {
    let state = source.state.clone();
    let host = cpal::default_host();
    let dev = match device {
        Some(name) => host
            .output_devices()
            .map_err(|e| Error::Audio(format!("could not list the speakers: {e}")))?
            .find(|d| d.name().map(|n| n == name).unwrap_or(false))
            .ok_or_else(|| {
                Error::Audio(format!(
                    "the speaker '{name}' is not connected: pick another one in Settings"
                ))
            })?,
        None => host.default_output_device().ok_or_else(|| {
            Error::Audio(
                "there is no speaker on this computer: connect one, or pick one in Settings".into(),
            )
        })?,
    };
    let name = dev.name().unwrap_or_else(|_| "the speaker".into());
    let mut stream = rodio::OutputStreamBuilder::from_device(dev)
        .and_then(|b| b.open_stream_or_fallback())
        .map_err(|e| {
            Error::Audio(format!(
                "could not open {name}: {e}. Is another program holding it?"
            ))
        })?;
    stream.log_on_drop(false);
    let sink = rodio::Sink::connect_new(stream.mixer());
    sink.append(source);
    state.wait_done();
    if !state.stop.load(Ordering::Relaxed) {
        // Let the device play out what it has buffered before the stream closes.
        sink.sleep_until_end();
        std::thread::sleep(Duration::from_millis(150));
    }
    sink.stop();
    Ok(())
}

/// Pull `source` at real-time pace in 10 ms blocks, as a device would, keeping what it pulled.
pub fn paced(mut source: StreamSource) -> Vec<f32> {
    let block = SAMPLE_RATE as usize / 100;
    let start = Instant::now();
    let mut out = Vec::new();
    let mut blocks = 0u32;
    'outer: loop {
        for _ in 0..block {
            match source.next() {
                Some(s) => out.push(s),
                None => break 'outer,
            }
        }
        blocks += 1;
        let due = start + Duration::from_millis(10) * blocks;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    out
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

/// The thread that takes the queue's samples to `output`.
pub(super) fn start_player(
    output: Output,
    rx: mpsc::Receiver<Vec<f32>>,
    play_state: Arc<PlayState>,
) -> Result<JoinHandle<Result<Vec<f32>>>> {
    let player: JoinHandle<Result<Vec<f32>>> = match output {
        Output::Device(name) => std::thread::Builder::new()
            .name("umwelt-playback".into())
            .spawn(move || {
                play_on_device(StreamSource::new(rx, play_state), name.as_deref())
                    .map(|_| Vec::new())
            }),
        Output::Paced => std::thread::Builder::new()
            .name("umwelt-playback".into())
            .spawn(move || Ok(paced(StreamSource::new(rx, play_state)))),
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
