//! The recording spool: audio goes to disk while it is being recorded, in chunks of at most
//! [`CHUNK`], each flushed to the disk (`fdatasync`) before the next one is taken. A crash, a
//! kill or a power cut loses at most the last chunk; the next start finds the spool and turns it
//! into a memory ([`crate::speech::DictationDrafts::recover`]).
//!
//! Format: `recordings/<unix ms>.spool` = the 8 bytes `UMWSPOOL`, the sample rate (u32 LE), the
//! channel count (u16 LE, always 1) and the sample format (u16 LE, 1 = i16), then mono i16 LE
//! samples at that rate. A spool that ends in half a sample was cut mid-write: the half is
//! dropped. A spool whose header is wrong is damaged: it is reported and set aside, never fatal.
//!
//! Beside an encrypted memory file the spool is sealed ([`crate::sealed`]): the same bytes,
//! each flush one sealed chunk, and a chunk cut mid-write dropped when it is read back.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::sealed::{Seal, SealedWriter};

/// The most audio that can be lost: what was recorded since the last flush.
pub const CHUNK: Duration = Duration::from_millis(250);
const MAGIC: &[u8; 8] = b"UMWSPOOL";
const HEADER: usize = 16;
/// The extension of a spool being (or left) written.
pub const EXT: &str = "spool";

/// Appends audio to a spool file, flushing each chunk to the disk.
pub struct SpoolWriter {
    file: Out,
    path: PathBuf,
    rate: u32,
    frames: u64,
}

/// Where a spool's bytes go: the file, or the file sealed.
enum Out {
    Plain(File),
    Sealed(SealedWriter<File>),
}

impl Out {
    fn file(&self) -> &File {
        match self {
            Out::Plain(f) => f,
            Out::Sealed(w) => w.get_ref(),
        }
    }

    /// Write `bytes` as one chunk and flush it to the disk; on failure, the file is cut back to
    /// what it held before, so that it holds whole chunks.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Out::Plain(f) => {
                let before = f.metadata()?.len();
                let r = f.write_all(bytes).and_then(|_| f.sync_data());
                if r.is_err() {
                    let _cut = f.set_len(before);
                }
                r
            }
            Out::Sealed(w) => {
                let mark = w.mark();
                let r = w.chunk(bytes).and_then(|_| w.get_ref().sync_data());
                if r.is_err() {
                    let _cut = w.get_ref().set_len(mark.1);
                    w.back_to(mark);
                }
                r
            }
        }
    }

    fn into_file(self) -> File {
        match self {
            Out::Plain(f) => f,
            Out::Sealed(w) => w.into_inner(),
        }
    }
}

impl SpoolWriter {
    /// Start a new spool in `dir` for audio at `rate` Hz, sealed with `seal` if given.
    pub fn create(dir: &Path, rate: u32, seal: Option<&Seal>) -> Result<SpoolWriter> {
        crate::paths::private_dir(dir)?;
        let stamp = crate::clock::now_ms();
        let mut path = dir.join(format!("{stamp}.{EXT}"));
        let mut n = 1;
        while path.exists() {
            path = dir.join(format!("{stamp}-{n}.{EXT}"));
            n += 1;
        }
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(Error::io(format!("creating {}", path.display())))?
        };
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&rate.to_le_bytes());
        header.extend_from_slice(&1u16.to_le_bytes());
        header.extend_from_slice(&1u16.to_le_bytes());
        // Held while recording: recovery skips a spool someone is still writing (the lock goes
        // with the process, so a killed recorder's spool is free).
        file.try_lock()
            .map_err(|e| Error::Audio(format!("could not lock {}: {e}", path.display())))?;
        let mut file = match seal {
            Some(s) => Out::Sealed(
                SealedWriter::new(file, s)
                    .map_err(Error::io(format!("writing {}", path.display())))?,
            ),
            None => Out::Plain(file),
        };
        file.append(&header)
            .and_then(|_| file.file().sync_all())
            .map_err(Error::io(format!("writing {}", path.display())))?;
        Ok(SpoolWriter {
            file,
            path,
            rate,
            frames: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Seconds written so far.
    pub fn seconds(&self) -> f64 {
        self.frames as f64 / self.rate as f64
    }

    /// Append mono samples and flush them to the disk. A full disk is an error here, with
    /// everything written before it still in the file.
    pub fn append(&mut self, mono: &[f32]) -> Result<()> {
        if mono.is_empty() {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(mono.len() * 2);
        for s in mono {
            bytes.extend_from_slice(&((s.clamp(-1.0, 1.0) * i16::MAX as f32) as i16).to_le_bytes());
        }
        // A short write (a full disk) may leave part of this chunk: the file is cut back to
        // what was written before, so the spool holds whole chunks. If even that fails, the
        // reader drops a trailing half sample (or half a sealed chunk).
        if let Err(e) = self.file.append(&bytes) {
            return Err(Error::io(format!(
                "writing the recording to {} (what was recorded before is kept there)",
                self.path.display()
            ))(e));
        }
        self.frames += mono.len() as u64;
        Ok(())
    }

    /// Done writing: the file stays locked (no recovery takes it) until the hold is dropped.
    pub fn close(self) -> SpoolHold {
        SpoolHold(self.file.into_file())
    }
}

/// A finished spool's lock, held until its recording has become a draft.
#[derive(Debug)]
pub struct SpoolHold(#[allow(dead_code)] File);

/// A spool read back.
#[derive(Debug)]
pub struct SpoolAudio {
    pub rate: u32,
    /// Mono, at `rate`.
    pub samples: Vec<f32>,
    /// It ended in half a sample (cut mid-write); the half was dropped.
    pub truncated: bool,
}

/// Read a spool (sealed ones with `seal`). A wrong header is [`Error::Audio`] saying the file
/// is damaged.
pub fn read(path: &Path, seal: Option<&Seal>) -> Result<SpoolAudio> {
    let mut r = SpoolReader::open(path, seal)?;
    let mut samples = Vec::new();
    while let Some(block) = r.next_block(1 << 20)? {
        samples.extend_from_slice(&block);
    }
    Ok(SpoolAudio {
        rate: r.rate,
        samples,
        truncated: r.truncated,
    })
}

/// Reads a spool a block at a time, so an hour-long recording never sits in memory whole.
pub struct SpoolReader {
    file: std::io::BufReader<Box<dyn crate::sealed::Source>>,
    rate: u32,
    frames: u64,
    /// The file ended in half a sample, or half a sealed chunk (it was cut mid-write).
    truncated: bool,
}

impl SpoolReader {
    /// Open and check the header (a wrong one is [`Error::Audio`]: "damaged"). A sealed spool
    /// opens with `seal`.
    pub fn open(path: &Path, seal: Option<&Seal>) -> Result<SpoolReader> {
        let damaged = |why: &str| {
            Error::Audio(format!(
                "the recording {} is damaged ({why}) and was set aside",
                path.display()
            ))
        };
        let opened = crate::sealed::open_file(path, seal, true).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => damaged(&e.to_string()),
            _ => Error::io(format!("reading the recording {}", path.display()))(e),
        })?;
        let len = opened.len;
        let mut file = std::io::BufReader::with_capacity(1 << 16, opened.reader);
        let mut head = [0u8; HEADER];
        if len < HEADER as u64 || file.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
            return Err(damaged("it does not start like a recording"));
        }
        let rate = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
        let channels = u16::from_le_bytes(head[12..14].try_into().expect("2 bytes"));
        let format = u16::from_le_bytes(head[14..16].try_into().expect("2 bytes"));
        if !(8_000..=192_000).contains(&rate) || channels != 1 || format != 1 {
            return Err(damaged("its header names an impossible format"));
        }
        let body = len - HEADER as u64;
        Ok(SpoolReader {
            file,
            rate,
            frames: body / 2,
            truncated: body % 2 == 1 || opened.cut,
        })
    }

    /// The recording's sample rate.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Samples of audio in the spool.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Seconds of audio in the spool.
    pub fn seconds(&self) -> f64 {
        self.frames as f64 / self.rate as f64
    }

    /// Whether the file ended in half a sample.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The next (at most) `max` samples; `None` at the end.
    pub fn next_block(&mut self, max: usize) -> Result<Option<Vec<f32>>> {
        let mut bytes = vec![0u8; max * 2];
        let mut got = 0;
        while got < bytes.len() {
            match self.file.read(&mut bytes[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("reading a recording")(e)),
            }
        }
        if got < 2 {
            return Ok(None);
        }
        Ok(Some(
            bytes[..got - got % 2]
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / i16::MAX as f32)
                .collect(),
        ))
    }
}

/// Lock a finished spool while it becomes a draft; an error if someone else holds it.
pub fn hold(path: &Path) -> Result<SpoolHold> {
    let f = File::open(path).map_err(Error::io(format!(
        "reading the recording {}",
        path.display()
    )))?;
    f.try_lock().map_err(|_| {
        Error::Audio(format!(
            "the recording {} is being recorded or saved by another process",
            path.display()
        ))
    })?;
    Ok(SpoolHold(f))
}

/// Whether a recorder (in this process or another) is still writing the spool.
pub fn in_use(path: &Path) -> bool {
    match File::open(path) {
        Ok(f) => matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => false,
    }
}

/// Spools left in `dir` (recordings that never became memories), oldest first. Spools still
/// being recorded are not among them.
pub fn unfinished(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == EXT))
                .collect()
        })
        .unwrap_or_default();
    found.retain(|p| !in_use(p));
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_reads_back_what_was_written_even_when_cut_mid_sample() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpoolWriter::create(dir.path(), 16_000, None).unwrap();
        let tone: Vec<f32> = (0..1600).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        w.append(&tone).unwrap();
        w.append(&tone).unwrap();
        let path = w.path().to_path_buf();
        assert!(
            in_use(&path) && unfinished(dir.path()).is_empty(),
            "a spool being written is not left over"
        );
        drop(w);
        assert!(!in_use(&path));
        assert_eq!(unfinished(dir.path()), vec![path.clone()]);
        let a = read(&path, None).unwrap();
        assert_eq!(
            (a.rate, a.samples.len(), a.truncated),
            (16_000, 3200, false)
        );
        assert!((a.samples[100] - tone[100]).abs() < 1e-3);
        // A kill mid-write leaves half a sample: it is dropped, the rest is kept.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[7]).unwrap();
        let a = read(&path, None).unwrap();
        assert_eq!((a.samples.len(), a.truncated), (3200, true));
        // A damaged header is a clear error, not a panic.
        std::fs::write(&path, b"RIFF....garbage").unwrap();
        assert!(read(&path, None)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        std::fs::write(&path, b"UMW").unwrap();
        assert!(read(&path, None)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
    }

    #[test]
    fn a_sealed_spool_holds_no_plain_audio_and_keeps_every_whole_chunk_when_cut() {
        let dir = tempfile::tempdir().unwrap();
        let seal = Seal::random().unwrap();
        let mut w = SpoolWriter::create(dir.path(), 16_000, Some(&seal)).unwrap();
        let tone: Vec<f32> = (0..4000).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
        for _ in 0..3 {
            w.append(&tone).unwrap();
        }
        let path = w.path().to_path_buf();
        drop(w);
        let bytes = std::fs::read(&path).unwrap();
        assert!(crate::sealed::is_sealed(&path).unwrap());
        assert!(
            !bytes.windows(8).any(|b| b == MAGIC),
            "the spool's header is sealed too"
        );
        let a = read(&path, Some(&seal)).unwrap();
        assert_eq!((a.samples.len(), a.truncated), (12_000, false));
        assert!((a.samples[100] - tone[100]).abs() < 1e-3);
        // Killed mid-chunk: the two whole chunks stay, at most the last quarter second goes.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(bytes.len() as u64 - 3000).unwrap();
        let a = read(&path, Some(&seal)).unwrap();
        assert_eq!((a.samples.len(), a.truncated), (8000, true));
        assert!(
            read(&path, Some(&Seal::random().unwrap())).is_err(),
            "another key opens nothing"
        );
    }
}
