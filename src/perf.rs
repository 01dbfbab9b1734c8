//! The performance switch: `UMWELT_PERF=off` turns every optimisation off (vector index, thread
//! tuning, caches) so a regression can be bisected in one step. Results must stay the same.

/// Whether optimisations are on (the default). Read from the environment each call, so a test or
/// the bench harness can flip it with [`set_enabled`].
pub fn enabled() -> bool {
    match OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) {
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
    OVERRIDE.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// Threads for compute-bound work: every core when tuned.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}
