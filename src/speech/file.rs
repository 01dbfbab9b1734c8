//! Transcribing an audio file the user already has (a voice memo, a meeting, a podcast): any of
//! WAV, MP3, FLAC, OGG (Vorbis or Opus), M4A/AAC, WebM/MKV, AIFF or CAF, decoded by symphonia
//! (Opus by libopus through `symphonia-adapter-libopus`), resampled to 16 kHz mono a block at a
//! time, and transcribed in stretches of at most 30 s (whisper's window) cut at the quietest
//! moment near each stretch's end. Memory holds one stretch, however long the file.
//!
//! Each stretch's text comes with whisper's timestamps ([`TimedText`], ms from the file's
//! start). Progress is reported after every stretch, and a cancel flag stops the work within a
//! stretch (whisper.cpp polls it). A file cut short (a truncated download) is transcribed up to
//! where it breaks, and the transcript says so.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::codecs::registry::CodecRegistry;
use symphonia::core::errors::Error as SymphError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

use crate::audio::{ToSpeechRate, SAMPLE_RATE};
use crate::error::{Error, Result};
use crate::speech::transcriber::{Decoding, TimedText, Transcriber, Workspace};

/// The formats a file may be in, as the user sees them (for messages and the file picker).
pub const FORMATS: &str = "WAV, MP3, FLAC, OGG/Opus, M4A/AAC, WebM, AIFF or CAF";

/// The file extensions offered by the file picker.
pub const EXTENSIONS: &[&str] = &[
    "wav", "mp3", "flac", "ogg", "oga", "opus", "m4a", "aac", "mp4", "webm", "mkv", "mka", "aif",
    "aiff", "caf",
];

/// Longest stretch handed to whisper at once: its window.
const STRETCH_S: f32 = 30.0;
/// A stretch is cut at the quietest moment of its last seconds, so no word is cut in two.
const CUT_SEARCH_S: f32 = 8.0;
/// The quietest moment is looked for in frames this long (samples at 16 kHz).
const CUT_FRAME: usize = SAMPLE_RATE as usize / 20;

/// How far a transcription has got.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct FileProgress {
    /// Seconds of the file transcribed so far.
    pub done_s: f32,
    /// The file's length in seconds (as its header says; 0 when it does not say).
    pub total_s: f32,
}

/// What was heard in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct FileTranscript {
    pub segments: Vec<TimedText>,
    /// Seconds of audio decoded.
    pub seconds: f32,
    /// Something the user should know (the file is cut short), if anything.
    pub problem: Option<String>,
}

impl FileTranscript {
    /// The segments' text as one note.
    pub fn text(&self) -> String {
        join_text(&self.segments)
    }
}

/// Segments' text as one note: a space between segments.
pub fn join_text(segments: &[TimedText]) -> String {
    let mut out = String::new();
    for s in segments {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(s.text.trim());
    }
    out
}

/// `m:ss` (or `h:mm:ss`) for a time in ms, as transcripts show it.
pub fn clock(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A file open for decoding, sealed or plain.
struct Source(crate::sealed::Opened);

impl std::io::Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.reader.read(buf)
    }
}

impl std::io::Seek for Source {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.0.reader.seek(to)
    }
}

impl symphonia::core::io::MediaSource for Source {
    fn is_seekable(&self) -> bool {
        true
    }
    fn byte_len(&self) -> Option<u64> {
        Some(self.0.len)
    }
}

/// An audio file opened for decoding, read as 16 kHz mono blocks.
pub struct AudioFile {
    format: Box<dyn FormatReader>,
    decoder: Box<dyn AudioDecoder>,
    track_id: u32,
    /// Each block at its own rate, to 16 kHz.
    to16: ToSpeechRate,
    total_s: f32,
    /// Why decoding stopped before the end, once it has.
    broken: Option<String>,
    done: bool,
    interleaved: Vec<f32>,
}

fn codecs() -> &'static CodecRegistry {
    static REGISTRY: std::sync::OnceLock<CodecRegistry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = CodecRegistry::new();
        symphonia::default::register_enabled_codecs(&mut r);
        r.register_audio_decoder::<symphonia_adapter_libopus::OpusDecoder>();
        r
    })
}

impl AudioFile {
    /// Open `path`; an error says why it cannot be read (missing, not audio, no decoder).
    pub fn open(path: &Path) -> Result<AudioFile> {
        AudioFile::open_sealed(path, None)
    }

    /// Open `path`, which may be one of Umwelt's recordings sealed with `seal`
    /// ([`crate::sealed`]): it is decrypted as it is decoded.
    pub fn open_sealed(path: &Path, seal: Option<&crate::sealed::Seal>) -> Result<AudioFile> {
        let name = path.display();
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(Error::InvalidInput(format!(
                "{name} is a folder; choose an audio file ({FORMATS})"
            )));
        }
        let file = crate::sealed::open_file(path, seal, false)
            .map_err(Error::io(format!("opening the audio file {name}")))?;
        let mss = MediaSourceStream::new(Box::new(Source(file)), Default::default());
        let mut hint = Hint::new();
        if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
            hint.with_extension(ext);
        }
        let not_audio = |detail: String| {
            Error::Audio(format!(
                "{name} is not an audio file Umwelt can read ({detail}). It reads {FORMATS}; \
                 convert the file to one of them and try again"
            ))
        };
        // A decoder's own bug on a hostile header (an overflow in a debug build) is a damaged
        // file to the user, not a crash.
        let format = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            symphonia::default::get_probe().probe(
                &hint,
                mss,
                FormatOptions::default(),
                MetadataOptions::default(),
            )
        }))
        .map_err(|_| not_audio("its header is damaged".into()))?
        .map_err(|e| not_audio(e.to_string()))?;
        let track = format
            .default_track(TrackType::Audio)
            .ok_or_else(|| not_audio("it holds no sound".into()))?;
        let params = track
            .codec_params
            .as_ref()
            .and_then(|p| p.audio())
            .ok_or_else(|| not_audio("its sound is in an unknown encoding".into()))?
            .clone();
        let decoder = codecs()
            .make_audio_decoder(&params, &AudioDecoderOptions::default())
            .map_err(|e| not_audio(format!("its sound's encoding is not supported: {e}")))?;
        let rate = params.sample_rate.unwrap_or(0);
        if rate != 0 {
            crate::audio::check_rate(rate)?;
        }
        let total_s = match (track.duration, track.time_base) {
            (Some(d), Some(tb)) => tb
                .calc_duration(d)
                .map(|t| t.as_secs_f64() as f32)
                .unwrap_or(0.0),
            _ => match (track.num_frames, rate) {
                (Some(n), r) if r > 0 => n as f32 / r as f32,
                _ => 0.0,
            },
        };
        let track_id = track.id;
        Ok(AudioFile {
            format,
            decoder,
            track_id,
            to16: ToSpeechRate::default(),
            total_s,
            broken: None,
            done: false,
            interleaved: Vec::new(),
        })
    }

    /// The length the file's header gives, in seconds (0 when it gives none).
    pub fn seconds(&self) -> f32 {
        self.total_s
    }

    /// Why the file could not be read to its end, once that has happened.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// The next block of 16 kHz mono samples; `None` at the end of the file (or where it
    /// breaks off: see [`AudioFile::broken`]).
    pub fn next_block(&mut self) -> Result<Option<Vec<f32>>> {
        // As at opening: a decoder that panics on a damaged packet ends the file there.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.decode_block())) {
            Ok(r) => r,
            Err(_) => {
                self.broken = Some("the file is damaged (its decoder gave up)".into());
                self.done = true;
                Ok(None)
            }
        }
    }

    fn decode_block(&mut self) -> Result<Option<Vec<f32>>> {
        while !self.done {
            let packet = match self.format.next_packet() {
                Ok(Some(p)) => p,
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(SymphError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    self.broken = Some("the file ends abruptly (cut short?)".into());
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.broken = Some(format!("the file is damaged ({e})"));
                    self.done = true;
                    break;
                }
            };
            if packet.track_id != self.track_id {
                continue;
            }
            let decoded = match self.decoder.decode(&packet) {
                Ok(d) => d,
                // A damaged packet: skip it, as players do.
                Err(SymphError::DecodeError(_)) | Err(SymphError::IoError(_)) => continue,
                Err(e) => {
                    self.broken = Some(format!("the sound could not be decoded ({e})"));
                    self.done = true;
                    break;
                }
            };
            let channels = decoded.spec().channels().count().max(1);
            let rate = decoded.spec().rate();
            if decoded.frames() == 0 {
                continue;
            }
            decoded.copy_to_vec_interleaved(&mut self.interleaved);
            let mono = crate::audio::downmix(&self.interleaved, channels);
            let block = match self.to16.push(rate, &mono) {
                Ok(b) => b,
                // A part whose rate cannot be read: what came before it is kept.
                Err(e) => {
                    self.broken = Some(e.to_string());
                    self.done = true;
                    break;
                }
            };
            if !block.is_empty() {
                return Ok(Some(block));
            }
        }
        // The resampler's last samples.
        let rest = self.to16.finish()?;
        Ok((!rest.is_empty()).then_some(rest))
    }
}

/// Transcribe the audio file at `path`. `progress` hears after every stretch how far it has got;
/// setting `cancel` stops the work (the result is then [`Error::Cancelled`]).
pub fn transcribe_file(
    path: &Path,
    transcriber: &Transcriber,
    how: &Decoding,
    cancel: Arc<AtomicBool>,
    mut progress: impl FnMut(FileProgress),
) -> Result<FileTranscript> {
    let mut file = AudioFile::open(path)?;
    let total_s = file.seconds();
    let how = Decoding {
        adapt_context: false,
        lead_in_s: 0.0,
        ..how.clone()
    };
    let stretch = (STRETCH_S * SAMPLE_RATE as f32) as usize;
    let mut pending: Vec<f32> = Vec::with_capacity(stretch * 2);
    // Where `pending` starts in the file, in samples.
    let mut offset = 0usize;
    let mut segments = Vec::new();
    let mut at_end = false;
    // One workspace for every stretch (whisper's memory, made once).
    let mut work = Workspace::default();
    progress(FileProgress {
        done_s: 0.0,
        total_s,
    });
    while !at_end || !pending.is_empty() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        while !at_end && pending.len() < stretch {
            match file.next_block()? {
                Some(b) => pending.extend_from_slice(&b),
                None => at_end = true,
            }
        }
        let cut = if pending.len() > stretch {
            quietest_cut(&pending[..stretch])
        } else {
            pending.len()
        };
        let piece = &pending[..cut];
        if !piece.is_empty() {
            let start_ms = (offset as i64 * 1000) / SAMPLE_RATE as i64;
            let heard = transcriber.timed_segments(&mut work, piece, &how, Some(cancel.clone()))?;
            let piece_ms = (piece.len() as i64 * 1000) / SAMPLE_RATE as i64;
            segments.extend(heard.into_iter().map(|t| TimedText {
                start_ms: start_ms + t.start_ms.min(piece_ms),
                end_ms: start_ms + t.end_ms.min(piece_ms),
                text: t.text,
            }));
        }
        offset += cut;
        pending.drain(..cut);
        progress(FileProgress {
            done_s: offset as f32 / SAMPLE_RATE as f32,
            total_s: total_s.max(offset as f32 / SAMPLE_RATE as f32),
        });
    }
    let seconds = offset as f32 / SAMPLE_RATE as f32;
    if seconds == 0.0 {
        return Err(Error::Audio(format!(
            "{} holds no sound that could be decoded{}",
            path.display(),
            file.broken().map(|b| format!(": {b}")).unwrap_or_default()
        )));
    }
    let got = clock((seconds * 1000.0) as i64);
    let problem = match file.broken() {
        Some(b) => Some(format!("{b}: transcribed the first {got} of it")),
        // A stream that simply stops (MP3 has no end marker) is cut short if its header
        // promised more.
        None if total_s > seconds + 1.0 => Some(format!(
            "the file ends at {got}, before the {} its header gives (cut short?): transcribed what is there",
            clock((total_s * 1000.0) as i64)
        )),
        None => None,
    };
    Ok(FileTranscript {
        segments,
        seconds,
        problem,
    })
}

/// Where to end a stretch: the start of the quietest frame in its last [`CUT_SEARCH_S`] seconds.
fn quietest_cut(stretch: &[f32]) -> usize {
    let search = (CUT_SEARCH_S * SAMPLE_RATE as f32) as usize;
    let from = stretch.len().saturating_sub(search);
    let mut best = (f32::MAX, stretch.len());
    let mut i = from;
    while i + CUT_FRAME <= stretch.len() {
        let energy: f32 = stretch[i..i + CUT_FRAME].iter().map(|x| x * x).sum();
        if energy < best.0 {
            best = (energy, i + CUT_FRAME / 2);
        }
        i += CUT_FRAME;
    }
    best.1.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_falls_in_the_quiet() {
        let n = (STRETCH_S * SAMPLE_RATE as f32) as usize;
        let mut pcm: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.05).sin() * 0.5).collect();
        let quiet = n - 3 * SAMPLE_RATE as usize;
        for x in &mut pcm[quiet..quiet + CUT_FRAME * 2] {
            *x = 0.0;
        }
        let cut = quietest_cut(&pcm);
        assert!(
            cut >= quiet && cut <= quiet + CUT_FRAME * 2,
            "cut at {cut}, quiet at {quiet}"
        );
    }

    #[test]
    fn a_header_with_an_impossible_rate_is_an_error_not_an_abort() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hostile.wav");
        let mut bytes = crate::audio::tests::wav_header(4_294_967_291, 64);
        bytes.extend([0u8; 64]);
        std::fs::write(&path, bytes).unwrap();
        let e = AudioFile::open(&path)
            .and_then(|mut f| f.next_block().map(|_| f))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("samples a second") || e.contains("not an audio file"),
            "{e}"
        );
    }

    #[test]
    fn clock_reads_like_a_player() {
        assert_eq!(clock(0), "0:00");
        assert_eq!(clock(61_500), "1:01");
        assert_eq!(clock(3_723_000), "1:02:03");
    }
}
