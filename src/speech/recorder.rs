//! The microphone, through cpal: capture from an input device until stopped, downmixed to mono,
//! spooled to disk as it comes ([`super::spool`]), resampled to 16 kHz with rubato at the end.
//!
//! The cpal stream lives on a thread of its own (a stream is not `Send` on every platform);
//! its callback hands samples to the `umwelt-spool` thread, which writes and flushes them every
//! quarter second, so memory holds a quarter second of audio however long the recording. A
//! device that fails mid-recording (it was unplugged) ends the capture but keeps what was
//! captured. A [`Monitor`] opens a device only to show its level (nothing is kept).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{FromSample, Sample, SizedSample};
use serde::{Deserialize, Serialize};

use crate::audio::{self, SAMPLE_RATE};
use crate::error::{Error, Result};
use crate::speech::spool::{self, SpoolWriter};
use std::path::{Path, PathBuf};

/// An input device the user can pick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct InputDevice {
    pub name: String,
    pub is_default: bool,
}

/// The input devices of the default audio host.
pub fn input_devices() -> Result<Vec<InputDevice>> {
    let host = cpal::default_host();
    let default = host.default_input_device().and_then(|d| d.name().ok());
    let devices = host
        .input_devices()
        .map_err(|e| Error::Audio(format!("could not list microphones: {e}")))?;
    Ok(devices
        .filter_map(|d| d.name().ok())
        .map(|name| InputDevice {
            is_default: Some(&name) == default.as_ref(),
            name,
        })
        .collect())
}

struct Shared {
    /// Captured and not yet on disk.
    samples: Mutex<Vec<f32>>,
    frames: AtomicUsize,
    /// Peak of the latest callback block, as f32 bits (the level meter).
    peak: std::sync::atomic::AtomicU32,
    failed: Mutex<Option<String>>,
    ended: AtomicBool,
    started: Instant,
    /// When the device last delivered a block (ms after `started`).
    last_block_ms: AtomicU64,
    /// Keep the samples (a recording) or only measure them (a level check). A recording whose
    /// spool cannot be written (the disk is full) stops keeping them, so memory stays bounded.
    keep: AtomicBool,
    /// Why the spool could not be written, if it could not: the recording should stop.
    spool_failed: Mutex<Option<String>>,
}

impl Shared {
    fn new(keep: bool) -> Shared {
        Shared {
            keep: AtomicBool::new(keep),
            spool_failed: Mutex::default(),
            samples: Mutex::default(),
            frames: AtomicUsize::new(0),
            peak: Default::default(),
            failed: Mutex::default(),
            ended: AtomicBool::new(false),
            started: Instant::now(),
            last_block_ms: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// A microphone that has sent nothing for this long has stopped (it was unplugged, or its driver
/// hung); a device that reported an error is taken as stopped after [`FAILED_SILENCE`].
pub const STALL: Duration = Duration::from_secs(2);
const FAILED_SILENCE: Duration = Duration::from_millis(500);
/// How long closing a device may take before its thread is left behind.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// An open input device: cpal's stream, on the `umwelt-mic` thread of its own (a stream is not
/// `Send` on every platform), feeding `shared` until closed.
struct OpenDevice {
    shared: Arc<Shared>,
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
    /// Told when the device is closed (its thread is about to end).
    closed: mpsc::Receiver<()>,
    rate: u32,
    name: String,
}

impl OpenDevice {
    fn open(wanted: Option<&str>, keep: bool) -> Result<OpenDevice> {
        let shared = Arc::new(Shared::new(keep));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(u32, String)>>();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (closed_tx, closed_rx) = mpsc::channel::<()>();
        let wanted = wanted.map(str::to_string);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("umwelt-mic".into())
            .spawn(move || {
                let stream = match open_stream(wanted.as_deref(), s.clone()) {
                    // The opener may have stopped waiting (after 10 s): then nobody is told, and
                    // the stream closes when the stop channel's sender goes.
                    Ok((stream, rate, name)) => {
                        let _opener_gone = ready_tx.send(Ok((rate, name)));
                        stream
                    }
                    Err(e) => {
                        let _opener_gone = ready_tx.send(Err(e));
                        return;
                    }
                };
                // Told to stop, or the device's owner is gone: either way, close.
                let _stopped_or_gone = stop_rx.recv();
                drop(stream);
                let _owner_gone = closed_tx.send(());
            })
            .map_err(Error::io("starting the recording thread"))?;
        let (rate, name) = ready_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| Error::Audio("the microphone did not start within 10 s".into()))??;
        Ok(OpenDevice {
            shared,
            stop: stop_tx,
            thread: Some(thread),
            closed: closed_rx,
            rate,
            name,
        })
    }

    /// Close the device. A driver that hangs (a device gone in a way its driver does not report)
    /// can keep cpal's capture thread blocked: after [`CLOSE_WAIT`] the thread is left to end on
    /// its own, and the recording is finished with what was captured.
    fn close(&mut self) {
        // The thread may have ended already (the device failed to open).
        let _ended = self.stop.send(());
        if let Some(t) = self.thread.take() {
            // Its sender goes when the thread ends, so a disconnect means it has ended too.
            if matches!(
                self.closed.recv_timeout(CLOSE_WAIT),
                Err(mpsc::RecvTimeoutError::Timeout)
            ) {
                tracing::warn!("the microphone '{}' did not close within {CLOSE_WAIT:?}; its thread is left to end", self.name);
            } else if t.join().is_err() {
                tracing::error!("the microphone thread crashed while closing");
            }
        }
    }

    fn level(&self) -> f32 {
        f32::from_bits(self.shared.peak.load(Ordering::Relaxed))
    }

    fn lost(&self) -> Option<String> {
        let silent = Duration::from_millis(
            self.shared
                .now_ms()
                .saturating_sub(self.shared.last_block_ms.load(Ordering::Relaxed)),
        );
        let failed = self
            .shared
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match failed {
            Some(e) if silent >= FAILED_SILENCE => Some(format!(
                "The microphone '{}' stopped working ({e}). Was it unplugged?",
                self.name
            )),
            _ if silent >= STALL => Some(format!(
                "The microphone '{}' has sent no sound for {} s. Was it unplugged?",
                self.name,
                silent.as_secs()
            )),
            _ => None,
        }
    }
}

impl Drop for OpenDevice {
    fn drop(&mut self) {
        self.close();
    }
}

/// A microphone opened only to show its level (Settings' "Test"): nothing is kept or written.
/// Closed when dropped.
pub struct Monitor {
    device: OpenDevice,
}

impl Monitor {
    /// Open the device named `device`, or the default input device.
    pub fn open(device: Option<&str>) -> Result<Monitor> {
        Ok(Monitor {
            device: OpenDevice::open(device, false)?,
        })
    }

    /// Peak level (0..1) of the latest block the device delivered.
    pub fn level(&self) -> f32 {
        self.device.level()
    }

    /// The device actually used.
    pub fn device(&self) -> &str {
        &self.device.name
    }

    /// Why the device stopped sending sound, if it did ([`Recorder::lost`]).
    pub fn lost(&self) -> Option<String> {
        self.device.lost()
    }
}

/// A recording in progress.
pub struct Recorder {
    mic: OpenDevice,
    spooler: Option<JoinHandle<Result<SpoolWriter>>>,
    spool_done: mpsc::Sender<()>,
    spool_path: PathBuf,
    /// What the spool is sealed with, if anything.
    seal: Option<crate::sealed::Seal>,
}

/// A finished recording: its spool on disk, still locked (so no recovery takes it) until the
/// recording is dropped, which is after it has become a draft.
#[derive(Debug)]
pub struct Recording {
    pub spool: PathBuf,
    pub seconds: f32,
    /// Why the spool stopped growing before the end (the disk was full), if it did.
    pub cut_short: Option<String>,
    _hold: spool::SpoolHold,
}

impl Recorder {
    /// Start capturing from the device named `device`, or the default input device, spooling
    /// to a new file in `spool_dir`. With a `tap`, every chunk is also sent there once it is on
    /// disk (at the device's rate, [`Recorder::rate`]); the sender is dropped when recording ends.
    /// The spool is sealed with `seal`, if given ([`crate::sealed`]).
    pub fn start(
        device: Option<&str>,
        spool_dir: &Path,
        seal: Option<&crate::sealed::Seal>,
        tap: Option<mpsc::Sender<Vec<f32>>>,
    ) -> Result<Recorder> {
        // On an error below, dropping `mic` closes the device.
        let mic = OpenDevice::open(device, true)?;
        let mut writer = SpoolWriter::create(spool_dir, mic.rate, seal)?;
        let spool_path = writer.path().to_path_buf();
        let s = mic.shared.clone();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let spooler = std::thread::Builder::new()
            .name("umwelt-spool".into())
            .spawn(move || loop {
                let finished = !matches!(
                    done_rx.recv_timeout(spool::CHUNK),
                    Err(mpsc::RecvTimeoutError::Timeout)
                );
                let chunk =
                    std::mem::take(&mut *s.samples.lock().unwrap_or_else(|p| p.into_inner()));
                if s.keep.load(Ordering::Relaxed) {
                    match writer.append(&chunk) {
                        // Only what is on disk is heard, so the text matches the recording kept.
                        Ok(()) if !chunk.is_empty() => {
                            if let Some(tap) = &tap {
                                // The listener may have ended (it failed): the audio is kept.
                                let _listener_gone = tap.send(chunk);
                            }
                            crate::crashpoint::reached("spool.chunk");
                        }
                        Ok(()) => {}
                        Err(e) => {
                            // Stop keeping samples (memory stays bounded) and say why; what
                            // is on disk is the recording.
                            s.keep.store(false, Ordering::Relaxed);
                            s.samples.lock().unwrap_or_else(|p| p.into_inner()).clear();
                            *s.spool_failed.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(disk_message(&e));
                        }
                    }
                }
                if finished {
                    return Ok(writer);
                }
            })
            .map_err(Error::io("starting the spool thread"))?;
        Ok(Recorder {
            mic,
            spooler: Some(spooler),
            spool_done: done_tx,
            spool_path,
            seal: seal.cloned(),
        })
    }

    /// The spool this recording is written to.
    pub fn spool_path(&self) -> &Path {
        &self.spool_path
    }

    /// The sample rate of the device (and of the spool and the tap).
    pub fn rate(&self) -> u32 {
        self.mic.rate
    }

    /// The device actually used.
    pub fn device(&self) -> &str {
        &self.mic.name
    }

    /// Seconds of audio captured so far.
    pub fn captured_seconds(&self) -> f32 {
        self.mic.shared.frames.load(Ordering::Relaxed) as f32 / self.mic.rate as f32
    }

    /// Peak level (0..1) of the latest block the device delivered, for a level meter.
    pub fn level(&self) -> f32 {
        self.mic.level()
    }

    /// Why the microphone stopped sending sound mid-recording, if it did: it reported an error
    /// and went quiet, or it has sent nothing for [`STALL`] (unplugged, or its driver hung). What
    /// was captured is kept; the caller should stop the recording and say why.
    pub fn lost(&self) -> Option<String> {
        self.spool_failed().or_else(|| self.mic.lost())
    }

    /// Wait until at least `seconds` of audio are in, the device ended, or `timeout` passed.
    /// Returns whether the audio is in. (A file-backed test device runs faster than real time,
    /// so tests wait for samples, not for the clock.)
    pub fn wait_for(&self, seconds: f32, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while self.captured_seconds() < seconds
            && t0.elapsed() < timeout
            && !self.mic.shared.ended.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.captured_seconds() >= seconds
    }

    /// Stop: the rest of the audio goes to the spool, which is handed back. A device error
    /// mid-recording is not an error here: what came before it is kept.
    pub fn stop(mut self) -> Result<Recording> {
        self.mic.close();
        // The spool thread ends on this or on the sender's drop; either is fine.
        let _ended = self.spool_done.send(());
        let writer =
            match self.spooler.take().map(|t| t.join()) {
                Some(Ok(r)) => r?,
                _ => return Err(Error::Audio(
                    "the spool thread crashed; the recording so far is in the recordings folder"
                        .into(),
                )),
            };
        let spool = writer.path().to_path_buf();
        let cut_short = self.spool_failed();
        // What is on disk is the recording (all of it, unless the disk filled up).
        let seconds = writer.seconds() as f32;
        let hold = writer.close();
        crate::crashpoint::reached("recording.closed");
        if seconds == 0.0 {
            if let Err(e) = std::fs::remove_file(&spool) {
                tracing::warn!("removing the empty recording {}: {e}", spool.display());
            }
            return Err(
                match self
                    .mic
                    .shared
                    .failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                {
                    Some(e) => Error::Audio(format!(
                        "the microphone '{}' failed before any sound was captured: {e}",
                        self.mic.name
                    )),
                    None => {
                        Error::InvalidInput("the recording is empty: nothing was captured".into())
                    }
                },
            );
        }
        Ok(Recording {
            spool,
            seconds,
            cut_short,
            _hold: hold,
        })
    }

    /// Why the spool could not be written, if it could not (the disk is full): the recording
    /// should stop, and what was written is kept.
    pub fn spool_failed(&self) -> Option<String> {
        self.mic
            .shared
            .spool_failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Samples captured and not yet on disk (at most a quarter second's, or none once the disk
    /// filled up).
    pub fn pending_samples(&self) -> usize {
        self.mic
            .shared
            .samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// Stop and read the whole recording back as 16 kHz mono (for short recordings and tests).
    pub fn stop_to_samples(self) -> Result<Vec<f32>> {
        let seal = self.seal.clone();
        let rec = self.stop()?;
        let a = spool::read(&rec.spool, seal.as_ref())?;
        std::fs::remove_file(&rec.spool)
            .map_err(Error::io(format!("removing {}", rec.spool.display())))?;
        audio::resample(&a.samples, a.rate, SAMPLE_RATE)
    }
}

/// What the user reads when the spool cannot be written.
fn disk_message(e: &Error) -> String {
    let full = matches!(e, Error::Io { source, .. } if is_disk_full(source));
    if full || e.to_string().contains("No space left") || e.to_string().contains("too large") {
        "The disk is full: the recording stopped, and what was recorded so far is kept. Free some space, then press Retry on the draft.".to_string()
    } else {
        format!("The recording could not be written to the disk ({e}); it stopped, and what was recorded so far is kept.")
    }
}

/// ENOSPC, EFBIG (a file size limit) or EDQUOT.
fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull
            | std::io::ErrorKind::FileTooLarge
            | std::io::ErrorKind::QuotaExceeded
    )
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.mic.close();
        // The spool thread ends on this or on the sender's drop; either is fine.
        let _ended = self.spool_done.send(());
        if let Some(t) = self.spooler.take() {
            match t.join() {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!("the recording's spool: {e}"),
                Err(_) => tracing::error!(
                    "the spool thread crashed; the recording so far is in the recordings folder"
                ),
            }
        }
    }
}

fn open_stream(wanted: Option<&str>, shared: Arc<Shared>) -> Result<(cpal::Stream, u32, String)> {
    let host = cpal::default_host();
    let device = match wanted {
        Some(name) => host
            .input_devices()
            .map_err(|e| Error::Audio(format!("could not list microphones: {e}")))?
            .find(|d| d.name().ok().as_deref() == Some(name))
            .ok_or_else(|| {
                Error::Audio(format!(
                    "the microphone '{name}' is not connected; pick another one in Settings"
                ))
            })?,
        None => host.default_input_device().ok_or_else(|| {
            Error::Audio(
                "no microphone was found: connect one, or check that the sound system sees it"
                    .into(),
            )
        })?,
    };
    let name = device.name().unwrap_or_else(|_| "microphone".into());
    let config = choose_config(&device)
        .map_err(|e| Error::Audio(format!("the microphone '{name}' cannot record: {e}")))?;
    let rate = config.sample_rate().0;
    let channels = config.channels() as usize;
    let fmt = config.sample_format();
    let cfg: cpal::StreamConfig = config.into();
    let stream = match fmt {
        cpal::SampleFormat::F32 => build::<f32>(&device, &cfg, channels, shared),
        cpal::SampleFormat::I16 => build::<i16>(&device, &cfg, channels, shared),
        cpal::SampleFormat::I32 => build::<i32>(&device, &cfg, channels, shared),
        cpal::SampleFormat::U16 => build::<u16>(&device, &cfg, channels, shared),
        cpal::SampleFormat::U8 => build::<u8>(&device, &cfg, channels, shared),
        other => {
            return Err(Error::Audio(format!(
                "the microphone '{name}' uses an unsupported sample format {other:?}"
            )))
        }
    }
    .map_err(|e| Error::Audio(format!("could not open the microphone '{name}': {e}")))?;
    stream
        .play()
        .map_err(|e| Error::Audio(format!("could not start the microphone '{name}': {e}")))?;
    Ok((stream, rate, name))
}

/// Whisper wants 16 kHz mono: ask the device for exactly that (16-bit first, then float) when it
/// offers it, which spares a resampling step; otherwise take the device's default and resample.
/// (ALSA devices backed by a file only deliver their frames intact in the file's own format.)
fn choose_config(
    device: &cpal::Device,
) -> std::result::Result<cpal::SupportedStreamConfig, String> {
    let ranges: Vec<_> = device
        .supported_input_configs()
        .map(|r| r.collect())
        .unwrap_or_default();
    for format in [cpal::SampleFormat::I16, cpal::SampleFormat::F32] {
        let fits = |r: &&cpal::SupportedStreamConfigRange| {
            r.channels() == 1
                && r.sample_format() == format
                && r.min_sample_rate().0 <= SAMPLE_RATE
                && SAMPLE_RATE <= r.max_sample_rate().0
        };
        if let Some(r) = ranges.iter().find(fits) {
            return Ok(r.clone().with_sample_rate(cpal::SampleRate(SAMPLE_RATE)));
        }
    }
    device.default_input_config().map_err(|e| e.to_string())
}

fn build<T>(
    device: &cpal::Device,
    cfg: &cpal::StreamConfig,
    channels: usize,
    shared: Arc<Shared>,
) -> std::result::Result<cpal::Stream, cpal::BuildStreamError>
where
    T: SizedSample,
    f32: FromSample<T>,
{
    let on_error = shared.clone();
    device.build_input_stream(
        cfg,
        move |data: &[T], _| {
            let mut buf = shared.samples.lock().unwrap_or_else(|p| p.into_inner());
            let mut peak = 0f32;
            for frame in data.chunks_exact(channels) {
                let x = frame.iter().map(|s| f32::from_sample(*s)).sum::<f32>() / channels as f32;
                peak = peak.max(x.abs());
                if shared.keep.load(Ordering::Relaxed) {
                    buf.push(x);
                }
            }
            shared.peak.store(peak.to_bits(), Ordering::Relaxed);
            shared
                .last_block_ms
                .store(shared.now_ms(), Ordering::Relaxed);
            shared
                .frames
                .fetch_add(data.len() / channels, Ordering::Relaxed);
        },
        move |err| {
            *on_error.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(err.to_string());
            on_error.ended.store(true, Ordering::Relaxed);
        },
        None,
    )
}
