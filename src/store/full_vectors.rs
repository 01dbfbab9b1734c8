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
//! The file is a cache of what the store file holds, made again from it whenever an index
//! loads; nothing is lost with it. A failure to write it (a full disk) brings the vectors back
//! to the heap, where they stay: the disk costs memory then, never a memory or a recall. Only a
//! failure to read it back is an error (the store then drops the index and loads it again).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use crate::embed::EMBED_DIM;
use crate::kernels::{self, Kernels};

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
    /// Where the side file may go (the store file's folder); `None`: always on the heap.
    spill_dir: Option<PathBuf>,
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
    /// Vectors that move to a side file in `spill_dir` past [`SPILL_FROM`] rows (never, if
    /// `None`).
    pub(super) fn new(spill_dir: Option<PathBuf>) -> FullVectors {
        FullVectors::spilling_from(spill_dir, SPILL_FROM)
    }

    /// [`FullVectors::new`] with another threshold (tests use a small one).
    pub(super) fn spilling_from(spill_dir: Option<PathBuf>, rows: usize) -> FullVectors {
        FullVectors {
            rows: 0,
            heap: Vec::new(),
            file: None,
            spill_dir,
            spill_from: rows,
        }
    }

    /// Whether the vectors are in the side file.
    pub(super) fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// The bytes kept on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        if self.spilled() {
            0
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
        if let Some(f) = &self.file {
            match f.write_all_at(as_bytes(v), Self::offset(self.rows)) {
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
        let f = self.file.take().expect("spilled");
        let mut heap = vec![0f32; self.rows * EMBED_DIM];
        if let Err(e) = f.read_exact_at(as_bytes_mut(&mut heap), 0) {
            self.file = Some(f);
            return Err(e);
        }
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
        let Some(dir) = self.spill_dir.take() else {
            return;
        };
        let written = tempfile::tempfile_in(&dir).and_then(|f| {
            f.write_all_at(as_bytes(&self.heap), 0)?;
            Ok(f)
        });
        match written {
            Ok(f) => {
                self.file = Some(f);
                self.heap = Vec::new();
            }
            Err(e) => tracing::warn!(
                "the vector index keeps its f32 vectors in memory: writing them to a side \
                 file in {} failed: {e}",
                dir.display()
            ),
        }
    }

    /// Replace row `row`.
    pub(super) fn set(&mut self, row: usize, v: &[f32]) -> io::Result<()> {
        assert!(row < self.rows, "row {row} of {}", self.rows);
        if let Some(f) = &self.file {
            match f.write_all_at(as_bytes(v), Self::offset(row)) {
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
            if row == last {
                self.rows = last;
                return Ok(());
            }
            let mut v = vec![0f32; EMBED_DIM];
            f.read_exact_at(as_bytes_mut(&mut v), Self::offset(last))?;
            match f.write_all_at(as_bytes(&v), Self::offset(row)) {
                Ok(()) => {
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
            for &j in &order[at..end] {
                let r = rows[j as usize] - first;
                out[j as usize] = (k.dot_f32)(q, &span[r * d..(r + 1) * d]);
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
        assert!(row < self.rows, "row {row} of {}", self.rows);
        let d = EMBED_DIM;
        match &self.file {
            Some(f) => {
                let mut v = vec![0f32; d];
                f.read_exact_at(as_bytes_mut(&mut v), Self::offset(row))?;
                Ok(v)
            }
            None => Ok(self.heap[row * d..(row + 1) * d].to_vec()),
        }
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
        let dir = tempfile::tempdir().unwrap();
        let mut heap = FullVectors::new(None);
        let mut file = FullVectors::spilling_from(Some(dir.path().to_path_buf()), 8);
        for i in 0..200 {
            heap.push(&vector(i)).unwrap();
            file.push(&vector(i)).unwrap();
        }
        assert!(file.spilled() && !heap.spilled());
        assert_eq!(file.heap_bytes(), 0);
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

    /// A folder the side file cannot be made in leaves the vectors on the heap, all of them
    /// still there.
    #[test]
    fn vectors_stay_on_the_heap_when_the_side_file_cannot_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("not-there");
        let mut s = FullVectors::spilling_from(Some(missing), 4);
        for i in 0..10 {
            s.push(&vector(i)).unwrap();
        }
        assert!(!s.spilled());
        assert_eq!(s.heap_bytes(), 10 * ROW_BYTES);
        assert_eq!(s.get(9).unwrap(), vector(9));
    }
}
