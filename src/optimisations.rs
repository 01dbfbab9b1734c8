//! The performance switch: `UMWELT_PERF=off` turns every optimisation off (vector index, thread
//! tuning, caches) so a regression can be bisected in one step. Results must stay the same.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether optimisations are on (the default). Read from the environment each call, so a test or
/// the bench harness can flip it with [`set_enabled`].
pub fn enabled() -> bool {
    match OVERRIDE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => !matches!(
            std::env::var("UMWELT_PERF").as_deref(),
            Ok("off") | Ok("0") | Ok("false")
        ),
    }
}

static OVERRIDE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Force the switch for this process (the bench harness runs each scenario both ways).
/// `None` goes back to the environment variable.
pub fn set_enabled(on: Option<bool>) {
    let v = match on {
        Some(true) => 1,
        Some(false) => 2,
        None => 0,
    };
    OVERRIDE.store(v, Ordering::Relaxed);
}

/// Give the system back the memory the allocator keeps after loading models: glibc holds on to
/// what a load freed (files read whole, graphs optimised, first runs' buffers) for the next
/// allocation, and all of it counts in the app's resident set. After the warm-up this returns
/// ~43 MiB (docs/PERFORMANCE.md, "Memory, measured"). A few milliseconds of work; call it off
/// the paths a user waits on. Nothing with `UMWELT_PERF=off`, or on a C library without it.
pub fn release_freed_memory() {
    if !enabled() {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: glibc's own call, safe at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Threads for compute-bound work: every core when tuned.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

/// Threads for whisper.cpp right now: the cores other processes leave free, at least one.
///
/// whisper.cpp's threads spin at every barrier of the graph, so a thread that shares its core
/// with another busy process makes the others wait out its time slice. Measured on this 2-core
/// machine, a 1.8 s sentence with two other busy processes: 29 s with two threads, 3.8 s with
/// one (docs/PERFORMANCE.md, "Whisper under load"). Other processes' load is read from
/// `/proc/stat` minus this process's own time, over the interval since the last call (at least
/// [`LOAD_WINDOW`]; call [`watch_load`] ahead of time to start one). Elsewhere than Linux: every core.
pub fn free_threads() -> usize {
    let cores = threads();
    let mut last = LOAD.lock().unwrap_or_else(|p| p.into_inner());
    let seen = *last;
    let (prev, answer) = match seen {
        Some(seen) => seen,
        None => {
            // Nothing to compare with: look over a short window now.
            let Some(start) = cpu_load::sample() else {
                return cores;
            };
            std::thread::sleep(std::time::Duration::from_millis(100));
            (start, cores)
        }
    };
    let Some(now) = cpu_load::sample() else {
        return cores;
    };
    if seen.is_some() && now.at.duration_since(prev.at) < LOAD_WINDOW {
        return answer;
    }
    let answer = cpu_load::free(&prev, &now, cores).unwrap_or(answer);
    *last = Some((now, answer));
    answer
}

/// Compute threads this process's running decodes hold (see [`lease_threads`]).
static LEASED: AtomicUsize = AtomicUsize::new(0);

/// Threads lent to one piece of compute-bound work until dropped.
#[derive(Debug)]
pub struct ThreadLease {
    n: usize,
    pool: &'static AtomicUsize,
}

impl ThreadLease {
    /// How many threads the work may run.
    pub fn threads(&self) -> usize {
        self.n
    }
}

impl Drop for ThreadLease {
    fn drop(&mut self) {
        self.pool.fetch_sub(self.n, Ordering::AcqRel);
    }
}

/// Threads for one whisper decode: what other processes leave free ([`free_threads`]) less what
/// this process's other decodes hold, at least one; given back when the lease drops. Two decodes
/// at once in one process (a file transcribed while the user dictates, two tests side by side)
/// then share the cores instead of each spinning on all of them. One thread with
/// `UMWELT_PERF=off`.
pub fn lease_threads() -> ThreadLease {
    lease_from(&LEASED, if enabled() { free_threads() } else { 1 })
}

/// `free` threads less what `pool` already lends, at least one, added to `pool`.
fn lease_from(pool: &'static AtomicUsize, free: usize) -> ThreadLease {
    let mut held = pool.load(Ordering::Acquire);
    loop {
        let n = free.saturating_sub(held).max(1);
        match pool.compare_exchange_weak(held, held + n, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return ThreadLease { n, pool },
            Err(now) => held = now,
        }
    }
}

/// Start measuring other processes' load, so that the next [`free_threads`] has an interval to
/// look at without waiting.
pub fn watch_load() {
    if let Some(now) = cpu_load::sample() {
        let mut last = LOAD.lock().unwrap_or_else(|p| p.into_inner());
        let answer = last.map_or(threads(), |(_, a)| a);
        if last.is_none_or(|(prev, _)| now.at.duration_since(prev.at) >= LOAD_WINDOW) {
            *last = Some((now, answer));
        }
    }
}

/// The shortest interval [`free_threads`] measures load over; a shorter one reuses the last answer.
pub const LOAD_WINDOW: std::time::Duration = std::time::Duration::from_millis(250);

static LOAD: std::sync::Mutex<Option<(cpu_load::Sample, usize)>> = std::sync::Mutex::new(None);

mod cpu_load {
    use std::time::Instant;

    /// CPU time counters (clock ticks) at one moment.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Sample {
        pub at: Instant,
        /// All CPUs, all time.
        total: u64,
        /// All CPUs, idle (and waiting for I/O).
        idle: u64,
        /// This process, user and system.
        own: u64,
    }

    #[cfg(target_os = "linux")]
    pub(super) fn sample() -> Option<Sample> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        parse(&stat, &own)
    }

    #[cfg(not(target_os = "linux"))]
    pub fn sample() -> Option<Sample> {
        None
    }

    /// From `/proc/stat` ("cpu user nice system idle iowait irq softirq steal ...") and
    /// `/proc/self/stat` (utime and stime are the 14th and 15th fields).
    pub(super) fn parse(stat: &str, own: &str) -> Option<Sample> {
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        if cpu.len() < 5 {
            return None;
        }
        // Fields after the command name, which may itself hold spaces and parentheses.
        let rest: Vec<&str> = own.rsplit_once(')')?.1.split_whitespace().collect();
        let field = |n: usize| rest.get(n - 3)?.parse::<u64>().ok();
        Some(Sample {
            at: Instant::now(),
            total: cpu.iter().sum(),
            idle: cpu[3] + cpu[4],
            own: field(14)? + field(15)?,
        })
    }

    /// Cores free of other processes between two samples, rounded, between 1 and `cores`.
    pub(super) fn free(a: &Sample, b: &Sample, cores: usize) -> Option<usize> {
        let total = b.total.checked_sub(a.total).filter(|&t| t > 0)?;
        let idle = b.idle.saturating_sub(a.idle);
        let own = b.own.saturating_sub(a.own);
        let others = total.saturating_sub(idle).saturating_sub(own) as f64 / total as f64;
        let free = cores as f64 * (1.0 - others);
        Some((free.round() as usize).clamp(1, cores))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn at(total: u64, idle: u64, own: u64) -> Sample {
            let stat = format!(
                "cpu  {} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\n",
                total - idle
            );
            let me = format!("42 (umwelt (x) y) S 1 1 1 0 -1 0 0 0 0 0 {own} 0 0 0 20 0");
            parse(&stat, &me).unwrap()
        }

        #[test]
        fn another_process_on_one_core_leaves_one_thread_and_our_own_work_does_not_count() {
            // 2 cores, 100 ticks: a busy process holds 50 of them (one core).
            assert_eq!(free(&at(1000, 500, 0), &at(1100, 550, 0), 2), Some(1));
            // The same busy ticks, but they were ours.
            assert_eq!(free(&at(1000, 500, 0), &at(1100, 550, 50), 2), Some(2));
            // Both cores busy with others: still one thread.
            assert_eq!(free(&at(1000, 500, 0), &at(1100, 500, 0), 2), Some(1));
            // A light load (20 %) does not take a core away.
            assert_eq!(free(&at(1000, 500, 0), &at(1100, 580, 0), 2), Some(2));
            // No time passed: no answer.
            assert_eq!(free(&at(1000, 500, 0), &at(1000, 500, 0), 2), None);
        }

        #[test]
        fn this_machine_can_be_read() {
            #[cfg(target_os = "linux")]
            assert!(sample().is_some());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_decodes_in_one_process_share_the_cores_and_give_them_back() {
        static POOL: AtomicUsize = AtomicUsize::new(0);
        let first = lease_from(&POOL, 2);
        assert_eq!(first.threads(), 2);
        // The cores are taken: the second decode still runs, on one thread.
        let second = lease_from(&POOL, 2);
        assert_eq!(second.threads(), 1);
        drop(first);
        // The first decode's two threads came back; the second still holds one.
        let third = lease_from(&POOL, 2);
        assert_eq!(third.threads(), 1);
        drop((second, third));
        assert_eq!(POOL.load(Ordering::Acquire), 0);
        assert_eq!(lease_from(&POOL, 2).threads(), 2);
        // Another process busy on one core leaves one.
        assert_eq!(lease_from(&POOL, 1).threads(), 1);
    }
}
