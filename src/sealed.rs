//! Sealed files: Umwelt's recordings, spools and dictation drafts, encrypted at rest beside an
//! encrypted memory file, with XChaCha20-Poly1305 in chunks (the STREAM construction).
//!
//! Format: the 8 bytes `UMWSEAL1`, a random 19-byte nonce prefix, then chunks. A chunk is its
//! plain length (u32 LE, the top bit set on the last chunk) and that many bytes encrypted, with
//! their 16-byte tag. Chunk `i`'s nonce is the prefix, `i` (u32 BE) and a byte that is 1 on the
//! last chunk only: a chunk cannot be moved, dropped, or taken from another file, and a file cut
//! short (no last chunk) is told from a whole one.
//!
//! - A **finished file** (a WAV, a draft, a kept copy) is written in chunks of [`CHUNK`] and
//!   ends with its last chunk; one without it was cut short and is refused as damaged.
//! - A **spool** is written one chunk per flush (a quarter second of audio), never finished:
//!   read back, every whole chunk counts, and a chunk cut mid-write (or torn by a power cut, so
//!   that it fails its check) is dropped: at most the last quarter second is lost, as with a
//!   plain spool.
//!
//! Plain files read as they are ([`open`] tells them apart by the first bytes), so a folder
//! being sealed or unsealed ([`sweep`]) is readable at every moment; each file is replaced in
//! one rename. The key ([`Seal`]) is random and kept inside the encrypted memory file
//! (`store::Store::seal`), so changing the memory file's key changes nothing here.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::Zeroizing;

use crate::error::{Error, Result};

/// The first bytes of a sealed file.
pub const MAGIC: &[u8; 8] = b"UMWSEAL1";
/// Bytes of random nonce prefix after [`MAGIC`].
const PREFIX: usize = 19;
/// Bytes before the first chunk.
const HEADER: u64 = (MAGIC.len() + PREFIX) as u64;
/// Plain bytes in each chunk of a finished file (the last one may hold fewer).
pub const CHUNK: usize = 64 * 1024;
/// Bytes of Poly1305 tag after each chunk's text.
const TAG: u64 = 16;
/// The bit of a chunk's length that marks the last chunk.
const LAST: u32 = 1 << 31;
/// No chunk is longer (a longer length is damage, or a torn write in a spool).
const MAX_CHUNK: u32 = 16 << 20;
/// Bytes in a key.
pub const KEY_BYTES: usize = 32;

/// The key that seals the recordings of one memory file. Never in a log, an error or `Debug`.
#[derive(Clone)]
pub struct Seal(Arc<Zeroizing<[u8; KEY_BYTES]>>);

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal(..)")
    }
}

impl Seal {
    /// A new random key from the operating system's generator.
    pub fn random() -> Result<Seal> {
        let mut k = Zeroizing::new([0u8; KEY_BYTES]);
        getrandom::fill(k.as_mut()).map_err(|e| {
            Error::io("drawing a random key for the recordings")(io::Error::other(e.to_string()))
        })?;
        Ok(Seal(Arc::new(k)))
    }

    /// A key from its bytes; `None` if they are not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<Seal> {
        let k: [u8; KEY_BYTES] = bytes.try_into().ok()?;
        Some(Seal(Arc::new(Zeroizing::new(k))))
    }

    /// The key as hex, to be kept inside the encrypted memory file.
    pub(crate) fn to_hex(&self) -> Zeroizing<String> {
        let mut s = Zeroizing::new(String::with_capacity(KEY_BYTES * 2));
        for b in self.0.iter() {
            s.push(char::from_digit((b >> 4) as u32, 16).expect("a nibble"));
            s.push(char::from_digit((b & 15) as u32, 16).expect("a nibble"));
        }
        s
    }

    /// A key from [`Seal::to_hex`]'s text; `None` if it is not one.
    pub(crate) fn from_hex(text: &str) -> Option<Seal> {
        let digits = text.as_bytes();
        if digits.len() != KEY_BYTES * 2 {
            return None;
        }
        let mut k = Zeroizing::new([0u8; KEY_BYTES]);
        for (i, pair) in digits.chunks_exact(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            k[i] = (hi * 16 + lo) as u8;
        }
        Some(Seal(Arc::new(k)))
    }

    /// With `UMWELT_TEST_ENCRYPTION=on` ([`crate::store::cipher::TEST_ENV`]), the public key
    /// every encrypted store of this process seals its recordings with, and that opens a
    /// sealed file read without a key: so that every test that reads a recording runs again on
    /// sealed ones. Never for memories: it is derived from a key written in the source.
    pub fn for_tests() -> Option<&'static Seal> {
        static SEAL: std::sync::OnceLock<Option<Seal>> = std::sync::OnceLock::new();
        SEAL.get_or_init(|| {
            let key = crate::store::cipher::test_key()?.random_bytes()?;
            let mut k = *key;
            k.reverse();
            Seal::from_bytes(&k)
        })
        .as_ref()
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        let key: &[u8; KEY_BYTES] = &self.0;
        XChaCha20Poly1305::new(key.into())
    }
}

/// The key for a sealed file read with `seal`: it, or the tests' key, or an error that says why
/// the file cannot be read.
fn key_for(seal: Option<&Seal>) -> io::Result<&Seal> {
    seal.or_else(|| Seal::for_tests()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            "it is encrypted, and its key is in the encrypted memory file, which is not open \
             with its key here",
        )
    })
}

fn nonce(prefix: &[u8; PREFIX], counter: u32, last: bool) -> XNonce {
    let mut n = [0u8; PREFIX + 5];
    n[..PREFIX].copy_from_slice(prefix);
    n[PREFIX..PREFIX + 4].copy_from_slice(&counter.to_be_bytes());
    n[PREFIX + 4] = last as u8;
    XNonce::clone_from_slice(&n)
}

fn damaged(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

const UNDECRYPTABLE: &str =
    "it cannot be decrypted: it is damaged, or it was encrypted with another memory file's key";

/// Whether the file at `path` is sealed (begins with [`MAGIC`]).
pub fn is_sealed(path: &Path) -> io::Result<bool> {
    let mut head = [0u8; MAGIC.len()];
    let mut f = File::open(path)?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..])? {
            0 => return Ok(false),
            n => got += n,
        }
    }
    Ok(&head == MAGIC)
}

/// Writes a sealed stream: chunks of [`CHUNK`] through [`Write`], or one chunk per call of
/// [`SealedWriter::chunk`] (a spool's flushes); [`SealedWriter::finish`] writes the last one.
pub struct SealedWriter<W: Write> {
    inner: W,
    cipher: XChaCha20Poly1305,
    prefix: [u8; PREFIX],
    counter: u32,
    buf: Zeroizing<Vec<u8>>,
    bytes: u64,
}

impl<W: Write> SealedWriter<W> {
    /// Begin a sealed stream in `inner` (its header is written now).
    pub fn new(mut inner: W, seal: &Seal) -> io::Result<SealedWriter<W>> {
        let mut prefix = [0u8; PREFIX];
        getrandom::fill(&mut prefix).map_err(|e| io::Error::other(e.to_string()))?;
        inner.write_all(MAGIC)?;
        inner.write_all(&prefix)?;
        Ok(SealedWriter {
            inner,
            cipher: seal.cipher(),
            prefix,
            counter: 0,
            buf: Zeroizing::new(Vec::with_capacity(CHUNK)),
            bytes: HEADER,
        })
    }

    fn emit(&mut self, plain: &[u8], last: bool) -> io::Result<()> {
        if self.counter == u32::MAX {
            return Err(io::Error::other("the file is too long to seal"));
        }
        let sealed = self
            .cipher
            .encrypt(
                &nonce(&self.prefix, self.counter, last),
                Payload {
                    msg: plain,
                    aad: MAGIC,
                },
            )
            .map_err(|_| io::Error::other("the recording could not be encrypted"))?;
        let mut frame = Vec::with_capacity(4 + sealed.len());
        let len = plain.len() as u32 | if last { LAST } else { 0 };
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(&sealed);
        self.inner.write_all(&frame)?;
        self.counter += 1;
        self.bytes += frame.len() as u64;
        Ok(())
    }

    /// Seal what is buffered, then `plain`, as chunks of their own now (not the last), of at
    /// most [`CHUNK`] bytes each (a spool's flush after a stall may hold minutes of audio).
    pub fn chunk(&mut self, plain: &[u8]) -> io::Result<()> {
        if !self.buf.is_empty() {
            let buffered = std::mem::take(&mut *self.buf);
            self.emit(&buffered, false)?;
        }
        for piece in plain.chunks(CHUNK) {
            self.emit(piece, false)?;
        }
        Ok(())
    }

    /// Bytes in the file so far (header and chunks written).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Where the stream is (chunks and bytes written), to go back to with
    /// [`SealedWriter::back_to`] once the file is cut back to that length (a chunk that failed
    /// to reach the disk, so that the next one takes its place).
    pub fn mark(&self) -> (u32, u64) {
        (self.counter, self.bytes)
    }

    pub fn back_to(&mut self, mark: (u32, u64)) {
        (self.counter, self.bytes) = mark;
    }

    /// The writer, without a last chunk (a spool, which never has one).
    pub fn into_inner(self) -> W {
        self.inner
    }

    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Write the last chunk (what is buffered, maybe nothing) and give the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        let rest = std::mem::take(&mut *self.buf);
        self.emit(&rest, true)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for SealedWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        while self.buf.len() > CHUNK {
            let rest = self.buf.split_off(CHUNK);
            let full = std::mem::replace(&mut *self.buf, rest);
            self.emit(&full, false)?;
        }
        Ok(data.len())
    }

    /// Flushes the chunks written so far (a partial chunk waits for more, or for `finish`).
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Where one chunk is.
#[derive(Debug, Clone, Copy)]
struct ChunkAt {
    /// Its length field's offset in the file.
    at: u64,
    /// Where its text starts in the plain stream.
    start: u64,
    len: u32,
    last: bool,
}

/// Reads a sealed stream, decrypting a chunk at a time, with [`Seek`] (every chunk is found by
/// its length fields when the stream is opened, without decrypting it).
pub struct SealedReader<R: Read + Seek> {
    inner: R,
    cipher: XChaCha20Poly1305,
    prefix: [u8; PREFIX],
    chunks: Vec<ChunkAt>,
    len: u64,
    pos: u64,
    current: Option<(usize, Zeroizing<Vec<u8>>)>,
    cut: bool,
}

impl<R: Read + Seek> SealedReader<R> {
    /// Open a sealed stream. `spool`: it may have no last chunk, and a last chunk cut short or
    /// torn is dropped ([`SealedReader::cut`]); otherwise either is damage. The first chunk is
    /// checked now, so a wrong key is an error here.
    pub fn new(mut inner: R, seal: &Seal, spool: bool) -> io::Result<SealedReader<R>> {
        let size = inner.seek(SeekFrom::End(0))?;
        inner.seek(SeekFrom::Start(0))?;
        let mut head = [0u8; HEADER as usize];
        if size < HEADER {
            return Err(damaged("it is too short to be an encrypted file"));
        }
        inner.read_exact(&mut head)?;
        if &head[..MAGIC.len()] != MAGIC {
            return Err(damaged("it is not an encrypted file"));
        }
        let prefix: [u8; PREFIX] = head[MAGIC.len()..].try_into().expect("the prefix");
        let mut chunks = Vec::new();
        let (mut at, mut start, mut cut, mut finished) = (HEADER, 0u64, false, false);
        while at < size {
            let mut field = [0u8; 4];
            if at + 4 > size {
                cut = true;
                break;
            }
            inner.seek(SeekFrom::Start(at))?;
            inner.read_exact(&mut field)?;
            let field = u32::from_le_bytes(field);
            let (len, last) = (field & !LAST, field & LAST != 0);
            let end = at + 4 + len as u64 + TAG;
            if len > MAX_CHUNK || end > size || chunks.len() as u64 >= u32::MAX as u64 {
                cut = true;
                break;
            }
            chunks.push(ChunkAt {
                at,
                start,
                len,
                last,
            });
            start += len as u64;
            at = end;
            if last {
                finished = true;
                break;
            }
        }
        if !spool && (!finished || at != size) {
            return Err(damaged(
                "it was cut short or has bytes after its end (it is damaged)",
            ));
        }
        let mut r = SealedReader {
            inner,
            cipher: seal.cipher(),
            prefix,
            chunks,
            len: start,
            pos: 0,
            current: None,
            cut,
        };
        if r.chunks.is_empty() {
            return if spool {
                Err(damaged("it holds no whole chunk"))
            } else {
                Err(damaged(UNDECRYPTABLE))
            };
        }
        r.load(0).map_err(|_| damaged(UNDECRYPTABLE))?;
        // A spool's last chunk torn by a power cut fails its check: it is what a crash may lose.
        let n = r.chunks.len();
        if spool && n > 1 && r.load(n - 1).is_err() {
            let dropped = r.chunks.pop().expect("a last chunk");
            r.len = dropped.start;
            r.cut = true;
            r.current = None;
        }
        Ok(r)
    }

    /// Bytes of plain text in the stream.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a spool's last chunk was cut short (and dropped).
    pub fn cut(&self) -> bool {
        self.cut
    }

    fn load(&mut self, i: usize) -> io::Result<()> {
        if self.current.as_ref().is_some_and(|(c, _)| *c == i) {
            return Ok(());
        }
        let c = self.chunks[i];
        self.inner.seek(SeekFrom::Start(c.at + 4))?;
        let mut sealed = vec![0u8; c.len as usize + TAG as usize];
        self.inner.read_exact(&mut sealed)?;
        let plain = self
            .cipher
            .decrypt(
                &nonce(&self.prefix, i as u32, c.last),
                Payload {
                    msg: &sealed,
                    aad: MAGIC,
                },
            )
            .map_err(|_| damaged(UNDECRYPTABLE))?;
        self.current = Some((i, Zeroizing::new(plain)));
        Ok(())
    }
}

impl<R: Read + Seek> Read for SealedReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len || out.is_empty() {
            return Ok(0);
        }
        let i = self.chunks.partition_point(|c| c.start <= self.pos) - 1;
        self.load(i)?;
        let c = self.chunks[i];
        let (_, plain) = self.current.as_ref().expect("loaded");
        let from = (self.pos - c.start) as usize;
        let n = out.len().min(plain.len() - from);
        out[..n].copy_from_slice(&plain[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for SealedReader<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// What [`open`] reads from: a plain file, or a sealed one decrypted as it is read.
pub trait Source: Read + Seek + Send + Sync {}
impl<T: Read + Seek + Send + Sync> Source for T {}

/// A file of the recordings folder, open for reading.
pub struct Opened {
    pub reader: Box<dyn Source>,
    /// Bytes of plain text.
    pub len: u64,
    /// A spool's last chunk was cut short, and dropped.
    pub cut: bool,
    pub sealed: bool,
}

/// Open the file at `path` for reading, sealed or plain. `seal` opens a sealed one (without it,
/// only the tests' key does, with `UMWELT_TEST_ENCRYPTION=on`). `spool`: see
/// [`SealedReader::new`].
pub fn open_file(path: &Path, seal: Option<&Seal>, spool: bool) -> io::Result<Opened> {
    let mut file = File::open(path)?;
    let sealed = is_sealed(path)?;
    if !sealed {
        let len = file.seek(SeekFrom::End(0))?;
        file.seek(SeekFrom::Start(0))?;
        return Ok(Opened {
            reader: Box::new(file),
            len,
            cut: false,
            sealed,
        });
    }
    let r = SealedReader::new(
        BufReader::with_capacity(1 << 16, file),
        key_for(seal)?,
        spool,
    )?;
    Ok(Opened {
        len: r.len(),
        cut: r.cut(),
        reader: Box::new(r),
        sealed,
    })
}

/// Open a finished file (not a spool) at `path` for reading, sealed or plain.
pub fn open(path: &Path, seal: Option<&Seal>) -> io::Result<Box<dyn Source>> {
    open_file(path, seal, false).map(|o| o.reader)
}

/// Read a whole finished file, sealed or plain (for small ones: drafts).
pub fn read(path: &Path, seal: Option<&Seal>) -> io::Result<Zeroizing<Vec<u8>>> {
    let mut out = Zeroizing::new(Vec::new());
    open(path, seal)?.read_to_end(&mut out)?;
    Ok(out)
}

/// A new private (0600) file being written, sealed when `seal` is given.
pub enum Sink {
    Plain(BufWriter<File>),
    Sealed(SealedWriter<BufWriter<File>>),
}

impl Sink {
    /// Create (or truncate) `path`, private to the user, sealed with `seal` if given.
    pub fn create(path: &Path, seal: Option<&Seal>) -> io::Result<Sink> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        let file = BufWriter::with_capacity(1 << 16, file);
        Ok(match seal {
            Some(s) => Sink::Sealed(SealedWriter::new(file, s)?),
            None => Sink::Plain(file),
        })
    }

    /// Write the end (a sealed file's last chunk) and sync the file to the disk.
    pub fn finish(self) -> io::Result<()> {
        let w = match self {
            Sink::Plain(w) => w,
            Sink::Sealed(s) => s.finish()?,
        };
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    }
}

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(data),
            Sink::Sealed(w) => w.write(data),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Sealed(w) => w.flush(),
        }
    }
}

/// Write `bytes` as the file at `path`, sealed with `seal` if given, atomically and durably
/// (a temporary `.part` file, synced, renamed; the caller syncs the folder).
pub fn write_atomically(path: &Path, bytes: &[u8], seal: Option<&Seal>) -> io::Result<()> {
    let tmp = part_of(path);
    let mut sink = Sink::create(&tmp, seal)?;
    sink.write_all(bytes)?;
    sink.finish()?;
    std::fs::rename(&tmp, path)
}

/// The temporary name a file is written under before it is renamed into place (a `.part` file
/// left by a crash is removed by the next start's recovery).
fn part_of(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    path.with_file_name(name)
}

/// Seal (`to` given) or unseal (`to` is `None`) the file at `path` in place: written anew
/// beside it and renamed over it, so that at every moment the file is whole, sealed or plain.
/// A file already as asked is left alone (`Ok(false)`). Spools (`.spool`) keep every whole
/// chunk. The file is locked while it changes; one that another process holds locked (a spool
/// being recorded) is left alone.
pub fn reseal(path: &Path, from: Option<&Seal>, to: Option<&Seal>) -> io::Result<bool> {
    if is_sealed(path)? == to.is_some() {
        return Ok(false);
    }
    let held = File::open(path)?;
    if held.try_lock().is_err() {
        return Ok(false);
    }
    let spool = path.extension().is_some_and(|x| x == "spool");
    let mut source = open_file(path, from, spool)?;
    let tmp = part_of(path);
    let mut write = || -> io::Result<()> {
        let mut sink = Sink::create(&tmp, to)?;
        io::copy(&mut source.reader, &mut sink)?;
        sink.finish()?;
        crate::crashpoint::reached("recording.resealed");
        std::fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    drop(held);
    Ok(true)
}

/// What [`sweep`] did.
#[derive(Debug, Default)]
pub struct Sweep {
    /// Files sealed or unsealed.
    pub changed: usize,
    /// Files that could not be, with why (they stay as they were, whole).
    pub problems: Vec<String>,
}

/// Bring every file of the recordings folder `dir` to `to`: sealed with it, or plain (`None`)
/// with `from` opening the sealed ones. Temporary (`.part`) and hidden files, links and
/// folders are left alone. Crash-safe at every point: each file changes in one rename.
pub fn sweep(dir: &Path, from: Option<&Seal>, to: Option<&Seal>) -> Sweep {
    let mut out = Sweep::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            !name.starts_with('.') && !name.ends_with(".part")
        })
        .collect();
    paths.sort();
    for p in paths {
        match reseal(&p, from, to) {
            Ok(true) => out.changed += 1,
            Ok(false) => {}
            Err(e) => out.problems.push(format!("{}: {e}", p.display())),
        }
    }
    if out.changed > 0 {
        if let Err(e) = crate::audio::sync_dir(dir) {
            out.problems.push(format!("{}: {e}", dir.display()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal() -> Seal {
        Seal::random().unwrap()
    }

    fn sealed_bytes(plain: &[u8], s: &Seal) -> Vec<u8> {
        let mut w = SealedWriter::new(Vec::new(), s).unwrap();
        w.write_all(plain).unwrap();
        w.finish().unwrap()
    }

    fn read_all(bytes: Vec<u8>, s: &Seal, spool: bool) -> io::Result<Vec<u8>> {
        let mut r = SealedReader::new(io::Cursor::new(bytes), s, spool)?;
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn what_is_sealed_reads_back_whole_and_seeks() {
        let s = seal();
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17] {
            let plain: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            let bytes = sealed_bytes(&plain, &s);
            assert_eq!(&bytes[..8], MAGIC);
            assert_eq!(
                read_all(bytes.clone(), &s, false).unwrap(),
                plain,
                "{n} bytes"
            );
            if n > 10 {
                let mut r = SealedReader::new(io::Cursor::new(bytes), &s, false).unwrap();
                r.seek(SeekFrom::Start(n as u64 - 10)).unwrap();
                let mut tail = Vec::new();
                r.read_to_end(&mut tail).unwrap();
                assert_eq!(tail, &plain[n - 10..]);
            }
        }
    }

    #[test]
    fn a_wrong_key_a_changed_byte_a_cut_or_a_moved_chunk_is_refused() {
        let s = seal();
        let plain = vec![7u8; 2 * CHUNK + 5];
        let bytes = sealed_bytes(&plain, &s);
        assert!(
            read_all(bytes.clone(), &seal(), false).is_err(),
            "wrong key"
        );
        let mut changed = bytes.clone();
        changed[HEADER as usize + CHUNK + 100] ^= 1;
        assert!(read_all(changed, &s, false).is_err(), "a changed byte");
        let cut = bytes[..bytes.len() - 100].to_vec();
        assert!(read_all(cut.clone(), &s, false).is_err(), "cut short");
        // Cut at a chunk's end: the last chunk is missing, which only a spool allows.
        let frame = 4 + CHUNK + TAG as usize;
        let at_boundary = bytes[..HEADER as usize + 2 * frame].to_vec();
        assert!(read_all(at_boundary.clone(), &s, false).is_err());
        assert_eq!(read_all(at_boundary, &s, true).unwrap().len(), 2 * CHUNK);
        // Two chunks swapped.
        let mut swapped = bytes[..HEADER as usize].to_vec();
        swapped.extend_from_slice(&bytes[HEADER as usize + frame..HEADER as usize + 2 * frame]);
        swapped.extend_from_slice(&bytes[HEADER as usize..HEADER as usize + frame]);
        swapped.extend_from_slice(&bytes[HEADER as usize + 2 * frame..]);
        assert!(read_all(swapped, &s, false).is_err(), "chunks swapped");
    }

    #[test]
    fn a_spool_keeps_every_whole_chunk_when_cut_or_torn() {
        let s = seal();
        let mut w = SealedWriter::new(Vec::new(), &s).unwrap();
        w.chunk(b"header..").unwrap();
        let mut whole = Vec::new();
        for i in 0..3u8 {
            w.chunk(&[i; 8000]).unwrap();
            whole.push(w.bytes());
        }
        let bytes = w.get_ref().clone();
        assert_eq!(
            read_all(bytes.clone(), &s, true).unwrap().len(),
            8 + 3 * 8000
        );
        // A flush after a long stall is cut into chunks a reader takes.
        let mut big = SealedWriter::new(Vec::new(), &s).unwrap();
        big.chunk(&vec![9u8; 40 << 20]).unwrap();
        assert_eq!(
            read_all(big.into_inner(), &s, true).unwrap().len(),
            40 << 20
        );
        // Cut in the middle of the third chunk: two whole ones stay.
        let cut = bytes[..whole[1] as usize + 900].to_vec();
        let mut r = SealedReader::new(io::Cursor::new(cut), &s, true).unwrap();
        assert_eq!((r.len(), r.cut()), (8 + 2 * 8000, true));
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(&out[8 + 8000..], &[1u8; 8000][..]);
        // The last chunk torn (whole length, wrong bytes): dropped, the rest kept.
        let mut torn = bytes.clone();
        let end = torn.len();
        torn[end - 40] ^= 0xff;
        let r = SealedReader::new(io::Cursor::new(torn), &s, true).unwrap();
        assert_eq!((r.len(), r.cut()), (8 + 2 * 8000, true));
        // A torn length field that says "enormous" is a cut, not an allocation.
        let mut wild = bytes[..whole[2] as usize].to_vec();
        wild.extend_from_slice(&(MAX_CHUNK + 1).to_le_bytes());
        assert_eq!(read_all(wild, &s, true).unwrap().len(), 8 + 3 * 8000);
    }

    #[test]
    fn a_folder_is_sealed_and_unsealed_in_place_and_reads_the_same_throughout() {
        let dir = tempfile::tempdir().unwrap();
        let s = seal();
        let wav = dir.path().join("1.wav");
        let draft = dir.path().join("1.draft.json");
        std::fs::write(&wav, vec![3u8; 100_000]).unwrap();
        std::fs::write(&draft, b"{\"text\":\"the dentist on Tuesday\"}").unwrap();
        std::fs::write(dir.path().join("2.wav.part"), b"half").unwrap();
        let done = sweep(dir.path(), None, Some(&s));
        assert_eq!((done.changed, done.problems.len()), (2, 0));
        assert!(is_sealed(&wav).unwrap() && is_sealed(&draft).unwrap());
        let on_disk = std::fs::read(&draft).unwrap();
        assert!(!on_disk.windows(7).any(|w| w == b"dentist"));
        assert_eq!(
            std::fs::read(dir.path().join("2.wav.part")).unwrap(),
            b"half"
        );
        assert_eq!(
            &*read(&draft, Some(&s)).unwrap(),
            b"{\"text\":\"the dentist on Tuesday\"}"
        );
        assert_eq!(
            sweep(dir.path(), None, Some(&s)).changed,
            0,
            "already sealed"
        );
        let e = open(&wav, None).err().map(|e| e.to_string());
        if Seal::for_tests().is_none() {
            assert!(e.unwrap().contains("encrypted"));
        }
        let back = sweep(dir.path(), Some(&s), None);
        assert_eq!((back.changed, back.problems.len()), (2, 0));
        assert_eq!(std::fs::read(&wav).unwrap(), vec![3u8; 100_000]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&wav).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn a_key_survives_its_hex_and_never_shows_in_debug() {
        let s = seal();
        let back = Seal::from_hex(&s.to_hex()).unwrap();
        assert_eq!(*s.0, *back.0);
        assert!(Seal::from_hex("zz").is_none());
        assert_eq!(format!("{s:?}"), "Seal(..)");
    }
}
