//! A second core for a short text's products. One text's 24 products each use every weight of
//! the model once (10.6 MB a text), so one core waits on widening and streaming weights; two
//! cores each make half of every product's columns. A thread is kept for it, owned by the model
//! and ended with it: starting one per product (24 a text) would cost more than it saves.
//!
//! The work of a product is cut into chunks of columns, which both threads claim from one
//! counter; the thread that posted the product claims too, so a helper that is slow to wake, or
//! busy with another process's core, only does fewer chunks. The counter holds the product's
//! number, its count of chunks and the next chunk in one word, so a claim of a finished product
//! fails instead of running with the next product's operands. Between products the helper spins
//! (they come microseconds apart); after [`IDLE`] with none it sleeps until the next is posted.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::gemm::{Gemm, Operand, Packed};

/// Column blocks a chunk (16 columns each; even).
const CHUNK_BLOCKS: usize = 4;
/// How long the helper spins without work before it sleeps.
const IDLE: Duration = Duration::from_micros(200);

const EPOCH_SHIFT: u32 = 40;
const COUNT_SHIFT: u32 = 20;
const FIELD: u64 = (1 << 20) - 1;

/// The product being made, as the helper reads it: written before the counter announces it.
#[derive(Default)]
struct Job {
    gemm: AtomicPtr<Gemm>,
    a: AtomicPtr<Operand>,
    w: AtomicPtr<Packed>,
    c: AtomicPtr<f32>,
    c_len: AtomicUsize,
}

#[repr(align(64))]
#[derive(Default)]
struct Line<T>(T);

#[derive(Default)]
struct Shared {
    /// `product << 40 | chunks << 20 | next chunk`.
    claim: Line<AtomicU64>,
    /// Chunks of the current product finished.
    done: Line<AtomicUsize>,
    job: Job,
    quit: AtomicBool,
}

/// The helper thread and what it shares with the thread that posts products.
pub struct Team {
    shared: Arc<Shared>,
    helper: Option<JoinHandle<()>>,
    /// One poster at a time: a second caller makes its products alone.
    posting: Mutex<u64>,
}

impl Team {
    /// Start the helper (`None` if the system will not start a thread).
    pub fn start() -> Option<Team> {
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let helper = std::thread::Builder::new()
            .name("umwelt-embed".into())
            .spawn(move || help(&theirs))
            .ok()?;
        Some(Team {
            shared,
            helper: Some(helper),
            posting: Mutex::new(0),
        })
    }

    /// Wake the helper ahead of the products to come (it takes a while to be scheduled).
    pub fn wake(&self) {
        if let Some(h) = &self.helper {
            h.thread().unpark();
        }
    }

    /// `C = A · W` by `gemm`, as [`Gemm::run`], with the helper making some of the columns; or
    /// alone if another caller is using the team.
    pub fn run(&self, gemm: &Gemm, a: &Operand, w: &Packed, c: &mut [f32]) {
        let Ok(mut epoch) = self.posting.try_lock() else {
            return gemm.run(a, w, c);
        };
        let blocks = Gemm::blocks(w.n());
        let chunks = blocks.div_ceil(CHUNK_BLOCKS);
        *epoch += 1;
        let s = &self.shared;
        let j = &s.job;
        j.gemm
            .store(gemm as *const Gemm as *mut Gemm, Ordering::Relaxed);
        j.a.store(a as *const Operand as *mut Operand, Ordering::Relaxed);
        j.w.store(w as *const Packed as *mut Packed, Ordering::Relaxed);
        j.c.store(c.as_mut_ptr(), Ordering::Relaxed);
        j.c_len.store(c.len(), Ordering::Relaxed);
        s.done.0.store(0, Ordering::Relaxed);
        let word = (*epoch & ((1 << (64 - EPOCH_SHIFT)) - 1)) << EPOCH_SHIFT
            | (chunks as u64) << COUNT_SHIFT;
        s.claim.0.store(word, Ordering::Release);
        self.wake();
        while let Some(chunk) = claim(s, word) {
            // SAFETY: this thread's own operands, alive until every chunk is done (below), and
            // the chunk's columns are claimed once.
            unsafe { run_chunk(gemm, a, w, c.as_mut_ptr(), c.len(), chunk, blocks) };
            s.done.0.fetch_add(1, Ordering::Release);
        }
        // Every chunk is claimed; wait for the helper's to be finished before the operands go.
        while s.done.0.load(Ordering::Acquire) < chunks {
            std::hint::spin_loop();
        }
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        if let Some(h) = self.helper.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Claim the next chunk of the product announced as `word`, if it is still that product and a
/// chunk is left.
fn claim(s: &Shared, word: u64) -> Option<usize> {
    let mut now = s.claim.0.load(Ordering::Acquire);
    loop {
        let next = now & FIELD;
        let chunks = (now >> COUNT_SHIFT) & FIELD;
        if now >> COUNT_SHIFT != word >> COUNT_SHIFT || next >= chunks {
            return None;
        }
        match s
            .claim
            .0
            .compare_exchange_weak(now, now + 1, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Some(next as usize),
            Err(seen) => now = seen,
        }
    }
}

/// # Safety
/// `c` is valid for `c_len` f32 and nobody else touches this chunk's columns.
unsafe fn run_chunk(
    gemm: &Gemm,
    a: &Operand,
    w: &Packed,
    c: *mut f32,
    c_len: usize,
    chunk: usize,
    blocks: usize,
) {
    let start = chunk * CHUNK_BLOCKS;
    let end = (start + CHUNK_BLOCKS).min(blocks);
    // SAFETY: passed on from the caller.
    unsafe { gemm.run_blocks(a, w, c, c_len, start..end) }
}

/// The helper: wait for a product, claim its chunks, repeat; sleep when none comes.
fn help(s: &Shared) {
    let mut last = 0u64;
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    loop {
        if s.quit.load(Ordering::Acquire) {
            return;
        }
        let word = s.claim.0.load(Ordering::Acquire);
        if word >> COUNT_SHIFT == last >> COUNT_SHIFT {
            spins += 1;
            if spins.is_multiple_of(1024) && idle_since.elapsed() > IDLE {
                std::thread::park_timeout(Duration::from_secs(1));
                idle_since = Instant::now();
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        last = word;
        while let Some(chunk) = claim(s, word) {
            // The claim succeeded for this product, whose poster is waiting for this chunk:
            // its operands are the job's, alive and unchanged until `done` says so.
            let j = &s.job;
            // SAFETY: the poster's operands (see above): `a` and `w` are borrowed by the
            // poster's `run`, which returns only after this chunk is counted done, and nobody
            // else writes this chunk's columns of `c`.
            unsafe {
                let gemm = &*j.gemm.load(Ordering::Relaxed);
                let w = &*j.w.load(Ordering::Relaxed);
                let a = &*j.a.load(Ordering::Relaxed);
                let blocks = Gemm::blocks(w.n());
                run_chunk(
                    gemm,
                    a,
                    w,
                    j.c.load(Ordering::Relaxed),
                    j.c_len.load(Ordering::Relaxed),
                    chunk,
                    blocks,
                );
            }
            s.done.0.fetch_add(1, Ordering::Release);
        }
        idle_since = Instant::now();
        spins = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::gemm::{self, Operand, Packed};

    /// Products made by the team equal products made alone, however the chunks fall between the
    /// two threads, over many products in a row (the helper sleeping between some of them).
    #[test]
    fn a_product_made_by_two_threads_is_the_product() {
        let team = Team::start().unwrap();
        let g = *gemm::fastest();
        let mut seed = 1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (round, &(k, n)) in [(384, 1152), (384, 384), (384, 1536), (1536, 384), (64, 32)]
            .iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            let q: Vec<i8> = (0..k * n).map(|_| (next() % 255) as i32 as i8).collect();
            let w = Packed::new(&q, k, n);
            let m = 16 * (1 + round % 3) - round % 5;
            let x: Vec<f32> = (0..m * k)
                .map(|_| (next() % 1000) as f32 / 500.0 - 1.0)
                .collect();
            let mut a = Operand::new(m, k);
            a.set(&x, k);
            let mut alone = vec![0f32; a.rows() * n];
            g.run(&a, &w, &mut alone);
            let mut together = vec![f32::NAN; a.rows() * n];
            team.run(&g, &a, &w, &mut together);
            assert_eq!(alone, together, "round {round}: {k} x {n}, {m} rows");
            if round % 7 == 0 {
                std::thread::sleep(IDLE * 2);
            }
        }
    }
}
