//! Audio files and sample-rate conversion: everything is brought to what whisper wants,
//! 16 kHz mono `f32` in -1..1.

use std::path::Path;

use rubato::{FftFixedIn, Resampler};

use crate::error::{Error, Result};

/// The sample rate whisper and the recordings on disk use.
pub const SAMPLE_RATE: u32 = 16_000;

/// Read a WAV file of any rate, mono or multi-channel, integer or float, as 16 kHz mono.
pub fn read_wav_16k_mono(path: &Path) -> Result<Vec<f32>> {
    let mut reader = hound::WavReader::open(path).map_err(|e| {
        Error::Audio(format!(
            "could not read {} as a WAV file: {e}",
            path.display()
        ))
    })?;
    let spec = reader.spec();
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

/// Write 16 kHz mono samples as a 16-bit WAV, through a temporary file renamed into place, so a
/// crash never leaves half a recording under the final name.
pub fn write_wav_16k_mono(path: &Path, samples: &[f32]) -> Result<()> {
    let mut sink = WavSink::create(path)?;
    sink.write(samples)?;
    sink.finish().map(|_| ())
}

/// The part of `pcm` between its first and last sound (peak above `threshold`), keeping
/// `margin` samples of the quiet on each side: a recorder left running, or the silence a killed
/// recording ends in, costs whisper nothing. All silence gives an empty slice.
pub fn trim_silence(pcm: &[f32], threshold: f32, margin: usize) -> &[f32] {
    let loud = |x: &f32| x.abs() >= threshold;
    match (pcm.iter().position(loud), pcm.iter().rposition(loud)) {
        (Some(a), Some(b)) => &pcm[a.saturating_sub(margin)..(b + 1 + margin).min(pcm.len())],
        _ => &pcm[..0],
    }
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
mod tests {
    use super::*;

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

/// A 16 kHz mono 16-bit WAV written a block at a time, under a temporary name until
/// [`WavSink::finish`] renames it into place.
pub struct WavSink {
    writer: hound::WavWriter<std::io::BufWriter<std::fs::File>>,
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl WavSink {
    pub fn create(path: &Path) -> Result<WavSink> {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: SAMPLE_RATE,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let tmp = path.with_extension("wav.part");
        let writer = hound::WavWriter::create(&tmp, spec).map_err(|e| {
            Error::Audio(format!(
                "could not write the recording to {}: {e}",
                tmp.display()
            ))
        })?;
        Ok(WavSink {
            writer,
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn write(&mut self, samples: &[f32]) -> Result<()> {
        let mut w = self.writer.get_i16_writer(samples.len() as u32);
        for s in samples {
            w.write_sample((s.clamp(-1.0, 1.0) * i16::MAX as f32) as i16);
        }
        w.flush().map_err(|e| {
            Error::Audio(format!(
                "could not write the recording to {}: {e}",
                self.tmp.display()
            ))
        })
    }

    /// Finish the header, sync the file to the disk and rename it into place. (The rename is
    /// made durable by the caller's [`sync_dir`], once the draft is written beside it.)
    pub fn finish(self) -> Result<std::path::PathBuf> {
        let tmp = self.tmp.clone();
        self.writer.finalize().map_err(|e| {
            Error::Audio(format!(
                "could not write the recording to {}: {e}",
                tmp.display()
            ))
        })?;
        std::fs::File::open(&self.tmp)
            .and_then(|f| f.sync_all())
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
        drop(self.writer);
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
