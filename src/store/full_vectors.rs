//! Where an index keeps its full (f32) vectors: on the heap while the index is small, in a side
//! file once it is large.
//!
//! The f32 vectors are 1 536 bytes a row, eight times the 4-bit codes the first pass reads, and
//! are read back only for the few hundred rows a query re-scores (or every row, for an exact
//! search). Past [`SPILL_FROM`] rows they move to an unnamed file beside the store's (made with
//! `O_TMPFILE` where the file system has it, so nothing is left behind after a crash) and are
//! read with `pread`: the system's page cache keeps them hot without counting them in the
//! process's memory, and gives them back to other programs when memory is short. Not `mmap`:
//! an I/O error on a mapped page is a `SIGBUS` that kills the app, where `pread` returns an
//! error.
//!
//! Beside an encrypted memory file the side file is sealed ([`SpillTo::sealed`]): each row is
//! encrypted with AES-256-CTR under a key drawn when the file is made and held only in this
//! process's memory, a fresh nonce for every row written (kept on the heap, 8 bytes a row), so
//! the vectors on the disk (which say what the memories are about) are noise to anyone who
//! reads the disk, during the run or after it. No tag: the file is this process's own, unnamed,
//! and gone when it closes; confidentiality is what it needs.
//!
//! The file is a cache of what the store file holds, made again from it whenever an index
//! loads; nothing is lost with it. A failure to write it (a full disk) brings the vectors back
//! to the heap, where they stay: the disk costs memory then, never a memory or a recall. Only a
//! failure to read it back is an error (the store then drops the index and loads it again).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use aes::cipher::{InnerIvInit, KeyInit, StreamCipher, StreamCipherCoreWrapper};
use aes::Aes256;
use ctr::flavors::Ctr64BE;
use ctr::CtrCore;
use zeroize::Zeroizing;

use crate::embed::EMBED_DIM;
use crate::kernels::{self, Kernels};

/// Where an index's side file may go, and whether it is sealed.
#[derive(Debug, Clone)]
pub(crate) struct SpillTo {
    /// The folder (the memory file's, on the same disk).
    pub dir: PathBuf,
    /// Encrypt the rows (beside an encrypted memory file).
    pub sealed: bool,
}

/// The key and the rows' nonces of a sealed side file.
struct RowCipher {
    /// The expanded key (zeroed when dropped).
    aes: Aes256,
    /// Each row's nonce (the number of the write that wrote it).
    nonces: Vec<u64>,
    /// The next write's number: never used twice under one key.
    next: u64,
}

impl RowCipher {
    fn new() -> io::Result<RowCipher> {
        let mut key = Zeroizing::new([0u8; 32]);
        getrandom::fill(key.as_mut()).map_err(|e| io::Error::other(e.to_string()))?;
        Ok(RowCipher {
            aes: Aes256::new(key.as_ref().into()),
            nonces: Vec::new(),
            next: 0,
        })
    }

    /// XOR `bytes` with the keystream of `nonce` (encrypts and decrypts alike): the counter
    /// block is the nonce then the block's number.
    fn apply(&self, nonce: u64, bytes: &mut [u8]) {
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&nonce.to_be_bytes());
        let core = CtrCore::<Aes256, Ctr64BE>::inner_iv_init(self.aes.clone(), &iv.into());
        StreamCipherCoreWrapper::from_core(core).apply_keystream(bytes);
    }

    /// `v` sealed under a nonce never used before, and that nonce (the caller keeps it as
    /// the row's once the bytes are written).
    fn seal(&mut self, v: &[f32]) -> (u64, Vec<u8>) {
        let nonce = self.next;
        self.next += 1;
        let mut bytes = as_bytes(v).to_vec();
        self.apply(nonce, &mut bytes);
        (nonce, bytes)
    }

    /// Row `row` was written under `nonce` (a new row when `row` is one past the last).
    fn wrote(&mut self, row: usize, nonce: u64) {
        if row == self.nonces.len() {
            self.nonces.push(nonce);
        } else {
            self.nonces[row] = nonce;
        }
    }
}

/// From this many rows the f32 vectors go to the side file (24 MiB of them on the heap until
/// then: at 10 000 rows, recall's re-scoring reads them from memory, 200 rows in ~25 µs where
/// 200 `pread`s cost ~150 µs; docs/PERFORMANCE.md, "The f32 vectors off the heap").
pub const SPILL_FROM: usize = 16_384;

/// Bytes of one row.
const ROW_BYTES: usize = EMBED_DIM * 4;

/// Rows read by one `pread` at most when rows lie close together (an exact search).
const SPAN_ROWS: usize = 64;

/// Wanted rows this close (rows between them) are read by one `pread` with those between: a
/// system call costs about half a microsecond more than copying a row.
const JOIN_GAP: usize = 4;

/// The f32 vectors of an index's rows, in row order.
pub(super) struct FullVectors {
    rows: usize,
    heap: Vec<f32>,
    file: Option<File>,
    /// The side file's cipher, when it is sealed.
    cipher: Option<RowCipher>,
    /// Where the side file may go (the store file's folder); `None`: always on the heap.
    spill_to: Option<SpillTo>,
    spill_from: usize,
}

impl Default for FullVectors {
    fn default() -> FullVectors {
        FullVectors::new(None)
    }
}

fn as_bytes(v: &[f32]) -> &[u8] {
    // SAFETY: any f32 is four initialised bytes, and u8 has no alignment.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn as_bytes_mut(v: &mut [f32]) -> &mut [u8] {
    // SAFETY: as `as_bytes`; any four bytes are some f32.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl FullVectors {
    /// Vectors that move to a side file past [`SPILL_FROM`] rows (never, if `None`).
    pub(super) fn new(spill_to: Option<SpillTo>) -> FullVectors {
        FullVectors::spilling_from(spill_to, SPILL_FROM)
    }

    /// [`FullVectors::new`] with another threshold (tests use a small one).
    pub(super) fn spilling_from(spill_to: Option<SpillTo>, rows: usize) -> FullVectors {
        FullVectors {
            rows: 0,
            heap: Vec::new(),
            file: None,
            cipher: None,
            spill_to,
            spill_from: rows,
        }
    }

    /// Write `v` as row `row` of the side file (sealed if it is).
    fn write_row(&mut self, row: usize, v: &[f32]) -> io::Result<()> {
        let f = self.file.as_ref().expect("spilled");
        match self.cipher.as_mut() {
            Some(c) => {
                // The row's nonce changes only once its new bytes are written.
                let (nonce, bytes) = c.seal(v);
                f.write_all_at(&bytes, Self::offset(row))?;
                c.wrote(row, nonce);
                Ok(())
            }
            None => f.write_all_at(as_bytes(v), Self::offset(row)),
        }
    }

    /// Read the side file's rows `first..first + out.len() / EMBED_DIM` into `out` (unsealed).
    fn read_rows(&self, first: usize, out: &mut [f32]) -> io::Result<()> {
        let f = self.file.as_ref().expect("spilled");
        f.read_exact_at(as_bytes_mut(out), Self::offset(first))?;
        if let Some(c) = &self.cipher {
            for (r, row) in out.chunks_exact_mut(EMBED_DIM).enumerate() {
                c.apply(c.nonces[first + r], as_bytes_mut(row));
            }
        }
        Ok(())
    }

    /// The vectors of `rows` (copies, in the order asked).
    pub(super) fn rows(&self, rows: &[usize]) -> io::Result<Vec<Vec<f32>>> {
        let d = EMBED_DIM;
        rows.iter()
            .map(|&r| {
                assert!(r < self.rows, "row {r} of {}", self.rows);
                if self.spilled() {
                    let mut v = vec![0f32; d];
                    self.read_rows(r, &mut v)?;
                    Ok(v)
                } else {
                    Ok(self.heap[r * d..(r + 1) * d].to_vec())
                }
            })
            .collect()
    }

    /// Whether the vectors are in the side file.
    pub(super) fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// The bytes kept on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        if self.spilled() {
            self.cipher.as_ref().map_or(0, |c| c.nonces.len() * 8)
        } else {
            self.rows * ROW_BYTES
        }
    }

    fn offset(row: usize) -> u64 {
        (row * ROW_BYTES) as u64
    }

    /// Add a row at the end.
    pub(super) fn push(&mut self, v: &[f32]) -> io::Result<()> {
        debug_assert_eq!(v.len(), EMBED_DIM);
        if self.spilled() {
            match self.write_row(self.rows, v) {
                Ok(()) => {
                    self.rows += 1;
                    return Ok(());
                }
                Err(e) => self.unspill(e)?,
            }
        }
        self.heap.extend_from_slice(v);
        self.rows += 1;
        if self.rows >= self.spill_from {
            self.spill();
        }
        Ok(())
    }

    /// The side file's rows back on the heap, after `failed` (writing to it) and for good; an
    /// error if they cannot be read back (the file is kept, unchanged).
    fn unspill(&mut self, failed: io::Error) -> io::Result<()> {
        let mut heap = vec![0f32; self.rows * EMBED_DIM];
        self.read_rows(0, &mut heap)?;
        self.file = None;
        self.cipher = None;
        tracing::warn!(
            "the vector index takes its f32 vectors back into memory ({} MiB): writing its side \
             file failed: {failed}",
            (heap.len() * 4) >> 20
        );
        self.heap = heap;
        Ok(())
    }
    /// Move the heap's rows to a new side file; on failure they stay on the heap, and the index
    /// does not try again (a full disk would make every row try).
    fn spill(&mut self) {
        let Some(to) = self.spill_to.take() else {
            return;
        };
        let written = tempfile::tempfile_in(&to.dir).and_then(|f| {
            if !to.sealed {
                f.write_all_at(as_bytes(&self.heap), 0)?;
                return Ok((f, None));
            }
            let mut c = RowCipher::new()?;
            let mut bytes = Vec::with_capacity(self.heap.len() * 4);
            for (r, v) in self.heap.chunks_exact(EMBED_DIM).enumerate() {
                let (nonce, sealed) = c.seal(v);
                bytes.extend_from_slice(&sealed);
                c.wrote(r, nonce);
            }
            f.write_all_at(&bytes, 0)?;
            Ok((f, Some(c)))
        });
        match written {
            Ok((f, cipher)) => {
                self.file = Some(f);
                self.cipher = cipher;
                self.heap = Vec::new();
            }
            Err(e) => tracing::warn!(
                "the vector index keeps its f32 vectors in memory: writing them to a side \
                 file in {} failed: {e}",
                to.dir.display()
            ),
        }
    }

    /// Replace row `row`.
    pub(super) fn set(&mut self, row: usize, v: &[f32]) -> io::Result<()> {
        assert!(row < self.rows, "row {row} of {}", self.rows);
        if self.spilled() {
            match self.write_row(row, v) {
                Ok(()) => return Ok(()),
                Err(e) => self.unspill(e)?,
            }
        }
        self.heap[row * EMBED_DIM..(row + 1) * EMBED_DIM].copy_from_slice(v);
        Ok(())
    }

    /// Remove row `row`, the last row taking its place.
    pub(super) fn swap_remove(&mut self, row: usize) -> io::Result<()> {
        assert!(row < self.rows, "row {row} of {}", self.rows);
        let last = self.rows - 1;
        if let Some(f) = &self.file {
            // The last row's bytes move as they are (sealed, with their nonce).
            let moved = if row == last {
                Ok(())
            } else {
                let mut v = vec![0u8; ROW_BYTES];
                f.read_exact_at(&mut v, Self::offset(last))?;
                f.write_all_at(&v, Self::offset(row))
            };
            match moved {
                Ok(()) => {
                    if let Some(c) = self.cipher.as_mut() {
                        c.nonces.swap_remove(row);
                    }
                    self.rows = last;
                    return Ok(());
                }
                Err(e) => self.unspill(e)?,
            }
        }
        let d = EMBED_DIM;
        self.heap.copy_within(last * d..(last + 1) * d, row * d);
        self.heap.truncate(last * d);
        self.rows = last;
        Ok(())
    }

    /// `Σ q·v` for the vector `v` of each of `rows` (in any order, repeats allowed), by the
    /// kernels `k`: `out[j]` is row `rows[j]`'s.
    pub(super) fn dots(
        &self,
        k: &Kernels,
        q: &[f32],
        rows: &[usize],
        out: &mut Vec<f32>,
    ) -> io::Result<()> {
        out.clear();
        out.resize(rows.len(), 0.0);
        let d = EMBED_DIM;
        let Some(f) = &self.file else {
            // Scattered rows, each a cold 1.5 KB: the row a few ahead is asked of memory while
            // this one is scored.
            const AHEAD: usize = 4;
            let row = |i: usize| &self.heap[i * d..(i + 1) * d];
            for &i in rows.iter().take(AHEAD) {
                kernels::prefetch(row(i));
            }
            for (j, &i) in rows.iter().enumerate() {
                if let Some(&next) = rows.get(j + AHEAD) {
                    kernels::prefetch(row(next));
                }
                out[j] = (k.dot_f32)(q, row(i));
            }
            return Ok(());
        };
        // In row order, rows close together read in one call.
        let mut order: Vec<u32> = (0..rows.len() as u32).collect();
        order.sort_unstable_by_key(|&j| rows[j as usize]);
        let mut buf = vec![0f32; SPAN_ROWS * d];
        let mut at = 0;
        while at < order.len() {
            let first = rows[order[at] as usize];
            // The span: every wanted row after `first` with no gap wider than JOIN_GAP, up to
            // SPAN_ROWS rows.
            let mut end = at + 1;
            let mut last = first;
            while end < order.len() {
                let r = rows[order[end] as usize];
                if r - first >= SPAN_ROWS || r - last > JOIN_GAP + 1 {
                    break;
                }
                last = r;
                end += 1;
            }
            let span = &mut buf[..(last - first + 1) * d];
            f.read_exact_at(as_bytes_mut(span), Self::offset(first))?;
            // Sealed: only the wanted rows are unsealed, each once (repeats lie together).
            let mut unsealed = usize::MAX;
            for &j in &order[at..end] {
                let row = rows[j as usize];
                let v = &mut span[(row - first) * d..(row - first + 1) * d];
                if let Some(c) = self.cipher.as_ref().filter(|_| row != unsealed) {
                    c.apply(c.nonces[row], as_bytes_mut(v));
                    unsealed = row;
                }
                out[j as usize] = (k.dot_f32)(q, v);
            }
            at = end;
        }
        Ok(())
    }
}

#[cfg(test)]
impl FullVectors {
    fn len(&self) -> usize {
        self.rows
    }

    /// Row `row`'s vector (a copy).
    fn get(&self, row: usize) -> io::Result<Vec<f32>> {
        Ok(self.rows(&[row])?.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: usize) -> Vec<f32> {
        (0..EMBED_DIM)
            .map(|i| ((seed * 31 + i * 7) % 101) as f32 / 101.0 - 0.5)
            .collect()
    }

    /// The same changes on a heap-only store and on one that spills at 8 rows, compared row by
    /// row and by `dots` on scattered, close, repeated and out-of-order rows.
    #[test]
    fn a_spilled_store_reads_back_what_the_heap_would() {
        for sealed in [false, true] {
            a_spilled_store_reads_back_what_the_heap_would_when(sealed);
        }
    }

    fn spill_to(dir: &std::path::Path, sealed: bool) -> Option<SpillTo> {
        Some(SpillTo {
            dir: dir.to_path_buf(),
            sealed,
        })
    }

    fn a_spilled_store_reads_back_what_the_heap_would_when(sealed: bool) {
        let dir = tempfile::tempdir().unwrap();
        let mut heap = FullVectors::new(None);
        let mut file = FullVectors::spilling_from(spill_to(dir.path(), sealed), 8);
        for i in 0..200 {
            heap.push(&vector(i)).unwrap();
            file.push(&vector(i)).unwrap();
        }
        assert!(file.spilled() && !heap.spilled());
        assert_eq!(file.heap_bytes(), if sealed { 200 * 8 } else { 0 });
        assert_eq!(heap.heap_bytes(), 200 * ROW_BYTES);
        for s in [&mut heap, &mut file] {
            s.set(3, &vector(1000)).unwrap();
            s.swap_remove(5).unwrap();
            s.swap_remove(s.len() - 1).unwrap();
            s.push(&vector(2000)).unwrap();
        }
        assert_eq!(heap.len(), file.len());
        for r in 0..heap.len() {
            assert_eq!(heap.get(r).unwrap(), file.get(r).unwrap(), "row {r}");
        }
        assert_eq!(file.get(5).unwrap(), vector(199));
        assert_eq!(file.get(3).unwrap(), vector(1000));
        let k = crate::kernels::current();
        let q = vector(77);
        let rows: Vec<usize> = vec![150, 3, 4, 5, 9, 7, 190, 0, 198, 64, 130, 4, 66, 65, 1];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        heap.dots(k, &q, &rows, &mut a).unwrap();
        file.dots(k, &q, &rows, &mut b).unwrap();
        assert_eq!(a, b);
        let every: Vec<usize> = (0..file.len()).rev().collect();
        heap.dots(k, &q, &every, &mut a).unwrap();
        file.dots(k, &q, &every, &mut b).unwrap();
        assert_eq!(a, b);
        for (j, &r) in every.iter().enumerate() {
            assert_eq!(b[j], (k.dot_f32)(&q, &heap.get(r).unwrap()));
        }
    }

    /// A sealed side file holds none of the vectors' bytes, not even of a row rewritten or
    /// moved; a plain one holds them as they are (so the check can fail).
    #[test]
    fn a_sealed_side_file_holds_no_vector() {
        use std::io::{Read, Seek};
        for sealed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = FullVectors::spilling_from(spill_to(dir.path(), sealed), 8);
            for i in 0..40 {
                s.push(&vector(i)).unwrap();
            }
            s.set(3, &vector(1000)).unwrap();
            s.swap_remove(5).unwrap();
            let mut bytes = Vec::new();
            let mut f = s.file.as_ref().unwrap().try_clone().unwrap();
            f.rewind().unwrap();
            f.read_to_end(&mut bytes).unwrap();
            let holds = |v: &[f32]| bytes.windows(ROW_BYTES).any(|w| w == as_bytes(v));
            for v in [vector(0), vector(1000), vector(39), vector(20)] {
                assert_eq!(holds(&v), !sealed, "sealed: {sealed}");
            }
            assert_eq!(s.get(5).unwrap(), vector(39));
            assert_eq!(s.get(3).unwrap(), vector(1000));
        }
    }

    /// A folder the side file cannot be made in leaves the vectors on the heap, all of them
    /// still there.
    #[test]
    fn vectors_stay_on_the_heap_when_the_side_file_cannot_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("not-there");
        let mut s = FullVectors::spilling_from(spill_to(&missing, true), 4);
        for i in 0..10 {
            s.push(&vector(i)).unwrap();
        }
        assert!(!s.spilled());
        assert_eq!(s.heap_bytes(), 10 * ROW_BYTES);
        assert_eq!(s.get(9).unwrap(), vector(9));
    }
}
