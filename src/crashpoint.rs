//! Named points on the way from a recording to a memory, in a conversion of the memory file
//! (`store::conversion::POINTS`), and between two recordings being sealed or unsealed
//! (`recording.resealed`, `src/sealed.rs`), where a test can kill the process, to prove that a kill at any
//! of them loses nothing (`tests/it/crash_sweep.rs`, `tests/it/encryption.rs`).
//!
//! With `UMWELT_CRASH_AT=<point>` in its environment (or `<point>#<n>`: the n-th time the point
//! is reached, counting from one), the process sends itself SIGKILL there: no destructor, no
//! flush, no exit handler runs, as when the process dies (the disk keeps what was synced).
//! Without the variable, a point costs one check of a value read once.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// The environment variable that names the point.
pub const ENV: &str = "UMWELT_CRASH_AT";

/// Every point, in the order a dictation reaches them (the sweep kills at each).
pub const POINTS: &[&str] = &[
    "spool.chunk",
    "recording.closed",
    "wav.written",
    "wav.renamed",
    "draft.written",
    "draft.renamed",
    "spool.removed",
    "memory.committed",
    "draft.removed",
];

fn target() -> Option<&'static (String, u32)> {
    static TARGET: OnceLock<Option<(String, u32)>> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            let v = std::env::var(ENV).ok()?;
            Some(match v.split_once('#') {
                Some((p, n)) => (p.to_string(), n.parse().unwrap_or(1).max(1)),
                None => (v, 1),
            })
        })
        .as_ref()
}

/// The process has reached `point`: die here if a test asked for it.
pub fn reached(point: &'static str) {
    static HITS: AtomicU32 = AtomicU32::new(0);
    let Some((name, nth)) = target() else { return };
    if name != point {
        return;
    }
    if HITS.fetch_add(1, Ordering::Relaxed) + 1 == *nth {
        kill_self();
    }
}

#[cfg(unix)]
fn kill_self() {
    // SAFETY: kill(2) on our own pid with a signal that cannot be caught.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_self() {
    std::process::abort();
}
