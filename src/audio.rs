//! Audio files and sample-rate conversion: everything is brought to what whisper wants,
//! 16 kHz mono `f32` in -1..1.

use std::io::Write;
use std::path::Path;

use rubato::{FftFixedIn, Resampler};

use crate::error::{Error, Result};

/// The sample rate whisper and the recordings on disk use.
pub const SAMPLE_RATE: u32 = 16_000;
/// The lowest sample rate Umwelt reads (telephone audio is 8 kHz; nothing real is below 4).
pub const MIN_RATE: u32 = 4_000;
/// The highest sample rate Umwelt reads (studio audio goes to 384 kHz). A file claiming more is
/// damaged or hostile: resampling from a rate near 2³² would ask for tens of GB at once, and a
/// failed allocation aborts the process rather than panicking.
pub const MAX_RATE: u32 = 384_000;

/// `rate` if Umwelt can resample from it, else why not (a clear error, before any allocation).
pub fn check_rate(rate: u32) -> Result<u32> {
    if (MIN_RATE..=MAX_RATE).contains(&rate) {
        Ok(rate)
    } else {
        Err(Error::Audio(format!(
            "the audio says it has {rate} samples a second; Umwelt reads {} to {} kHz, so the \
             file is damaged or not ordinary audio: convert it to a common rate (16, 44.1 or \
             48 kHz) and try again",
            MIN_RATE / 1000,
            MAX_RATE / 1000
        )))
    }
}

/// Read a WAV file of any rate, mono or multi-channel, integer or float, as 16 kHz mono.
pub fn read_wav_16k_mono(path: &Path) -> Result<Vec<f32>> {
    read_wav_16k_mono_sealed(path, None)
}

/// [`read_wav_16k_mono`] for a file that may be sealed with `seal` ([`crate::sealed`]).
pub fn read_wav_16k_mono_sealed(
    path: &Path,
    seal: Option<&crate::sealed::Seal>,
) -> Result<Vec<f32>> {
    let file = crate::sealed::open(path, seal)
        .map_err(Error::io(format!("reading {}", path.display())))?;
    let mut reader = hound::WavReader::new(std::io::BufReader::new(file)).map_err(|e| {
        Error::Audio(format!(
            "could not read {} as a WAV file: {e}",
            path.display()
        ))
    })?;
    let spec = reader.spec();
    check_rate(spec.sample_rate)?;
    let bad = |e: hound::Error| Error::Audio(format!("{} is damaged: {e}", path.display()));
    let interleaved: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Float => reader
            .samples::<f32>()
            .collect::<Result<_, _>>()
            .map_err(bad)?,
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32;
            reader
                .samples::<i32>()
                .map(|s| s.map(|s| s as f32 * scale))
                .collect::<Result<_, _>>()
                .map_err(bad)?
        }
    };
    let mono = downmix(&interleaved, spec.channels as usize);
    resample(&mono, spec.sample_rate, SAMPLE_RATE)
}

/// Decoded audio brought to [`SAMPLE_RATE`] block by block, following the rate of each block:
/// a stream whose rate changes midway (a chained Ogg, a spliced MKV) is resampled from each
/// part's own rate, not played at the wrong speed.
pub struct ToSpeechRate {
    /// The resampler for `rate` (none while the blocks are at [`SAMPLE_RATE`] already).
    resampler: Option<StreamResampler>,
    rate: u32,
}

impl Default for ToSpeechRate {
    fn default() -> ToSpeechRate {
        ToSpeechRate {
            resampler: None,
            rate: SAMPLE_RATE,
        }
    }
}

impl ToSpeechRate {
    /// The 16 kHz samples ready after a block of mono samples at `rate` Hz.
    pub fn push(&mut self, rate: u32, mono: &[f32]) -> Result<Vec<f32>> {
        let mut out = Vec::new();
        if rate != self.rate {
            check_rate(rate)?;
            // The last part's tail first, then a resampler for the new rate.
            if let Some(r) = self.resampler.take() {
                out = r.finish()?;
            }
            if rate != SAMPLE_RATE {
                self.resampler = Some(StreamResampler::new(rate, SAMPLE_RATE)?);
            }
            self.rate = rate;
        }
        match self.resampler.as_mut() {
            Some(r) => out.extend(r.push(mono)?),
            None => out.extend_from_slice(mono),
        }
        Ok(out)
    }

    /// The input ended: the last samples.
    pub fn finish(&mut self) -> Result<Vec<f32>> {
        self.rate = SAMPLE_RATE;
        match self.resampler.take() {
            Some(r) => r.finish(),
            None => Ok(Vec::new()),
        }
    }
}

/// Write 16 kHz mono samples as a 16-bit WAV, through a temporary file renamed into place, so a
/// crash never leaves half a recording under the final name.
pub fn write_wav_16k_mono(path: &Path, samples: &[f32]) -> Result<()> {
    let mut sink = WavSink::create(path, samples.len() as u64, None)?;
    sink.write(samples)?;
    sink.finish().map(|_| ())
}

/// Average interleaved channels into one.
pub fn downmix(interleaved: &[f32], channels: usize) -> Vec<f32> {
    if channels <= 1 {
        return interleaved.to_vec();
    }
    interleaved
        .chunks_exact(channels)
        .map(|f| f.iter().sum::<f32>() / channels as f32)
        .collect()
}

/// Resample mono audio with a band-limited FFT resampler (rubato), compensating its delay so the
/// output is aligned with the input and exactly `len * to / from` samples long.
pub fn resample(input: &[f32], from: u32, to: u32) -> Result<Vec<f32>> {
    if from == to || input.is_empty() {
        return Ok(input.to_vec());
    }
    check_rate(from)?;
    check_rate(to)?;
    let err = |e: &dyn std::fmt::Display| {
        Error::Audio(format!("could not resample {from} Hz to {to} Hz: {e}"))
    };
    let mut r =
        FftFixedIn::<f32>::new(from as usize, to as usize, 1024, 2, 1).map_err(|e| err(&e))?;
    let expected = (input.len() as u64 * to as u64 / from as u64) as usize;
    let delay = r.output_delay();
    let mut out = Vec::with_capacity(expected + delay + 2048);
    let mut pos = 0;
    while input.len() - pos >= r.input_frames_next() {
        let n = r.input_frames_next();
        out.extend_from_slice(
            &r.process(&[&input[pos..pos + n]], None)
                .map_err(|e| err(&e))?[0],
        );
        pos += n;
    }
    if pos < input.len() {
        out.extend_from_slice(
            &r.process_partial(Some(&[&input[pos..]]), None)
                .map_err(|e| err(&e))?[0],
        );
    }
    while out.len() < expected + delay {
        out.extend_from_slice(
            &r.process_partial::<&[f32]>(None, None)
                .map_err(|e| err(&e))?[0],
        );
    }
    out.drain(..delay);
    out.truncate(expected);
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_rate_out_of_range_is_refused_before_anything_is_allocated() {
        for rate in [0, 1, 3_999, 384_001, 4_294_967_291] {
            let e = StreamResampler::new(rate, SAMPLE_RATE)
                .err()
                .expect("refused");
            assert!(e.to_string().contains("samples a second"), "{e}");
            assert!(resample(&[0.0; 100], rate, SAMPLE_RATE).is_err());
        }
        assert!(StreamResampler::new(8_000, SAMPLE_RATE).is_ok());
        assert!(
            StreamResampler::new(383_987, SAMPLE_RATE).is_ok(),
            "a prime rate in range"
        );
        // A 44-byte WAV whose header claims a prime rate near 2³²: an error, not an abort.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hostile.wav");
        std::fs::write(&path, wav_header(4_294_967_291, 0)).unwrap();
        assert!(read_wav_16k_mono(&path).is_err());
        // One whose header is consistent (hound reads it): Umwelt's own check says why.
        std::fs::write(&path, wav_header(1_000_003, 0)).unwrap();
        let e = read_wav_16k_mono(&path).unwrap_err().to_string();
        assert!(e.contains("samples a second"), "{e}");
    }

    /// A 16-bit mono WAV header for `rate` Hz and `data` bytes of samples.
    pub(crate) fn wav_header(rate: u32, data: u32) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend(b"RIFF");
        h.extend((36 + data).to_le_bytes());
        h.extend(b"WAVEfmt ");
        h.extend(16u32.to_le_bytes());
        h.extend(1u16.to_le_bytes()); // PCM
        h.extend(1u16.to_le_bytes()); // mono
        h.extend(rate.to_le_bytes());
        h.extend(rate.wrapping_mul(2).to_le_bytes());
        h.extend(2u16.to_le_bytes());
        h.extend(16u16.to_le_bytes());
        h.extend(b"data");
        h.extend(data.to_le_bytes());
        h
    }

    #[test]
    fn a_stream_whose_rate_changes_midway_keeps_its_speed() {
        let tone = |rate: u32, secs: f32| -> Vec<f32> {
            (0..(rate as f32 * secs) as usize)
                .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin() * 0.5)
                .collect()
        };
        let mut to16 = ToSpeechRate::default();
        let mut out = Vec::new();
        for (rate, secs) in [(48_000, 1.0), (8_000, 1.0), (16_000, 0.5), (44_100, 0.5)] {
            for block in tone(rate, secs).chunks(1152) {
                out.extend(to16.push(rate, block).unwrap());
            }
        }
        out.extend(to16.finish().unwrap());
        // 3 s of sound is 48 000 samples at 16 kHz, whatever the parts' rates were.
        let want = 3 * SAMPLE_RATE as usize;
        assert!(
            out.len().abs_diff(want) < want / 100,
            "{} samples, not {want}",
            out.len()
        );
        // The 8 kHz second is at the right pitch: 880 zero crossings, not a sixth of them.
        let second = &out[16_500..31_500];
        let crossings = second
            .windows(2)
            .filter(|w| (w[0] < 0.0) != (w[1] < 0.0))
            .count();
        let want = (880.0 * 15_000.0 / 16_000.0) as usize;
        assert!(
            crossings.abs_diff(want) < want / 20,
            "{crossings} crossings, not {want}"
        );
    }

    #[test]
    fn resampling_keeps_length_and_pitch() {
        // One second of 440 Hz at 48 kHz becomes one second at 16 kHz with the same zero crossings.
        let tone: Vec<f32> = (0..48_000)
            .map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / 48_000.0).sin() * 0.5)
            .collect();
        let out = resample(&tone, 48_000, 16_000).unwrap();
        assert_eq!(out.len(), 16_000);
        let crossings = out[1000..15_000]
            .windows(2)
            .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
            .count();
        assert!(
            (crossings as i64 - 385).abs() <= 2,
            "{crossings} rising crossings in 0.875 s"
        );
    }

    #[test]
    fn wav_round_trip_and_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.wav");
        let samples: Vec<f32> = (0..1600)
            .map(|i| ((i % 100) as f32 / 100.0) - 0.5)
            .collect();
        write_wav_16k_mono(&p, &samples).unwrap();
        let back = read_wav_16k_mono(&p).unwrap();
        assert_eq!(back.len(), samples.len());
        assert!(back.iter().zip(&samples).all(|(a, b)| (a - b).abs() < 1e-3));
        std::fs::write(dir.path().join("bad.wav"), b"RIFF....not a wav").unwrap();
        let e = read_wav_16k_mono(&dir.path().join("bad.wav"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.wav"), "{e}");
    }
}

/// Resampling a stream block by block (live dictation, long recordings): same filter as
/// [`resample`], with its delay compensated, holding only one block of state.
pub struct StreamResampler {
    inner: Option<FftFixedIn<f32>>,
    from: u32,
    to: u32,
    pending: Vec<f32>,
    /// Output samples still to drop (the filter's delay).
    skip: usize,
    fed: u64,
    made: u64,
}

impl StreamResampler {
    pub fn new(from: u32, to: u32) -> Result<StreamResampler> {
        check_rate(from)?;
        check_rate(to)?;
        let inner = if from == to {
            None
        } else {
            let r =
                FftFixedIn::<f32>::new(from as usize, to as usize, 1024, 2, 1).map_err(|e| {
                    Error::Audio(format!("could not resample {from} Hz to {to} Hz: {e}"))
                })?;
            Some(r)
        };
        let skip = inner.as_ref().map(|r| r.output_delay()).unwrap_or(0);
        Ok(StreamResampler {
            inner,
            from,
            to,
            pending: Vec::new(),
            skip,
            fed: 0,
            made: 0,
        })
    }

    fn err(&self, e: &dyn std::fmt::Display) -> Error {
        Error::Audio(format!(
            "could not resample {} Hz to {} Hz: {e}",
            self.from, self.to
        ))
    }

    fn emit(&mut self, block: &[f32], out: &mut Vec<f32>) {
        let drop = self.skip.min(block.len());
        self.skip -= drop;
        out.extend_from_slice(&block[drop..]);
    }

    /// Resample the next block of input; returns what is ready.
    pub fn push(&mut self, input: &[f32]) -> Result<Vec<f32>> {
        let Some(r) = self.inner.as_mut() else {
            return Ok(input.to_vec());
        };
        self.fed += input.len() as u64;
        self.pending.extend_from_slice(input);
        let mut out = Vec::new();
        let mut pos = 0;
        let mut blocks = Vec::new();
        while self.pending.len() - pos >= r.input_frames_next() {
            let n = r.input_frames_next();
            let b = r
                .process(&[&self.pending[pos..pos + n]], None)
                .map_err(|e| Error::Audio(format!("could not resample: {e}")))?;
            blocks.push(b.into_iter().next().unwrap_or_default());
            pos += n;
        }
        self.pending.drain(..pos);
        for b in blocks {
            self.emit(&b, &mut out);
        }
        self.made += out.len() as u64;
        Ok(out)
    }

    /// The input ended: the rest, so that the whole output is `input * to / from` samples.
    pub fn finish(mut self) -> Result<Vec<f32>> {
        let Some(mut r) = self.inner.take() else {
            return Ok(Vec::new());
        };
        let expected = (self.fed * self.to as u64 / self.from as u64) as usize;
        let mut out = Vec::new();
        let mut blocks = Vec::new();
        if !self.pending.is_empty() {
            let b = r
                .process_partial(Some(&[&self.pending[..]]), None)
                .map_err(|e| self.err(&e))?;
            blocks.push(b.into_iter().next().unwrap_or_default());
        }
        let mut have = self.made as usize + blocks.iter().map(|b| b.len()).sum::<usize>();
        while have < expected + self.skip {
            let b = r
                .process_partial::<&[f32]>(None, None)
                .map_err(|e| self.err(&e))?;
            let b = b.into_iter().next().unwrap_or_default();
            if b.is_empty() {
                break;
            }
            have += b.len();
            blocks.push(b);
        }
        for b in blocks {
            self.emit(&b, &mut out);
        }
        out.truncate(expected.saturating_sub(self.made as usize));
        Ok(out)
    }
}

/// A 16 kHz mono 16-bit WAV of a known length written a block at a time (sealed with a
/// [`crate::sealed::Seal`] beside an encrypted memory file), under a temporary name until
/// [`WavSink::finish`] renames it into place. Its header is written first, with the length it
/// was created for: a sealed file is never rewritten, so the length is known before the audio.
pub struct WavSink {
    sink: crate::sealed::Sink,
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
    /// Samples the header promises, and samples written so far.
    frames: u64,
    written: u64,
}

/// The 44-byte header of a 16 kHz mono 16-bit PCM WAV of `frames` samples.
fn wav_header_16k(frames: u64) -> Option<[u8; 44]> {
    let data = u32::try_from(frames.checked_mul(2)?).ok()?;
    let riff = data.checked_add(36)?;
    let mut h = [0u8; 44];
    let mut at = 0;
    for part in [
        &b"RIFF"[..],
        &riff.to_le_bytes(),
        b"WAVE",
        b"fmt ",
        &16u32.to_le_bytes(),
        &1u16.to_le_bytes(),
        &1u16.to_le_bytes(),
        &SAMPLE_RATE.to_le_bytes(),
        &(SAMPLE_RATE * 2).to_le_bytes(),
        &2u16.to_le_bytes(),
        &16u16.to_le_bytes(),
        b"data",
        &data.to_le_bytes(),
    ] {
        h[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    Some(h)
}

impl WavSink {
    /// A WAV of `frames` samples at 16 kHz, to be written to `path`, sealed with `seal` if given.
    pub fn create(path: &Path, frames: u64, seal: Option<&crate::sealed::Seal>) -> Result<WavSink> {
        let tmp = path.with_extension("wav.part");
        let failed = |e: &dyn std::fmt::Display| {
            Error::Audio(format!(
                "could not write the recording to {}: {e}",
                tmp.display()
            ))
        };
        let header = wav_header_16k(frames)
            .ok_or_else(|| failed(&"it is longer than a WAV file can hold (37 hours): split it"))?;
        let mut sink = crate::sealed::Sink::create(&tmp, seal).map_err(|e| failed(&e))?;
        sink.write_all(&header).map_err(|e| failed(&e))?;
        Ok(WavSink {
            sink,
            tmp,
            path: path.to_path_buf(),
            frames,
            written: 0,
        })
    }

    /// Append samples (any beyond the length the header promises are left out).
    pub fn write(&mut self, samples: &[f32]) -> Result<()> {
        let room = (self.frames - self.written).min(samples.len() as u64) as usize;
        let mut bytes = Vec::with_capacity(room * 2);
        for s in &samples[..room] {
            bytes.extend_from_slice(&((s.clamp(-1.0, 1.0) * i16::MAX as f32) as i16).to_le_bytes());
        }
        self.written += room as u64;
        self.sink.write_all(&bytes).map_err(|e| {
            Error::Audio(format!(
                "could not write the recording to {}: {e}",
                self.tmp.display()
            ))
        })
    }

    /// Fill what the header promised (silence, if fewer samples came), sync the file to the
    /// disk and rename it into place. (The rename is made durable by the caller's [`sync_dir`],
    /// once the draft is written beside it.)
    pub fn finish(mut self) -> Result<std::path::PathBuf> {
        let missing = self.frames - self.written;
        if missing > 0 {
            tracing::warn!(
                "{missing} samples short of the recording's length: filled with silence"
            );
            self.write(&vec![0.0; missing as usize])?;
        }
        let tmp = self.tmp.clone();
        self.sink
            .finish()
            .map_err(Error::io(format!("saving the recording {}", tmp.display())))?;
        crate::crashpoint::reached("wav.written");
        std::fs::rename(&self.tmp, &self.path).map_err(Error::io(format!(
            "saving the recording as {}",
            self.path.display()
        )))?;
        crate::crashpoint::reached("wav.renamed");
        Ok(self.path)
    }

    /// Give up: the temporary file goes.
    pub fn abandon(self) {
        let tmp = self.tmp.clone();
        drop(self.sink);
        if let Err(e) = std::fs::remove_file(&tmp) {
            tracing::warn!("removing {}: {e}", tmp.display());
        }
    }
}

/// Make the renames and removals in `dir` durable (fsync the folder). Where a folder cannot be
/// opened for that (not on Unix), nothing is done.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
