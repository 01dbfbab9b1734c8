//! The dashboard's benchmark runs, the shell's own part of them (the harness is the engine's): one
//! run at a time, a cancel flag reset per run, and the finished run kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use umwelt::bench::{self, BenchConfig, Progress};
use umwelt::perf_db::{RunSummary, Runs};

/// Whether a benchmark runs, and its cancel flag.
#[derive(Default)]
pub struct BenchState {
    pub running: Arc<AtomicBool>,
    pub cancel: Arc<AtomicBool>,
}

/// Another run is in progress.
#[derive(Debug)]
pub struct Busy;

/// Held while a run goes on; dropping it frees the slot.
pub struct BenchGuard(Arc<AtomicBool>);

impl BenchGuard {
    pub fn acquire(state: &BenchState) -> Result<BenchGuard, Busy> {
        if state.running.swap(true, Ordering::AcqRel) {
            return Err(Busy);
        }
        state.cancel.store(false, Ordering::Relaxed);
        Ok(BenchGuard(state.running.clone()))
    }
}

impl Drop for BenchGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Run the harness and keep the run (a cancelled run keeps what it measured, if anything; a run
/// cancelled before its first sample keeps nothing and says so).
pub fn run_and_keep(
    runs: &Runs,
    config: &BenchConfig,
    progress: &mut dyn FnMut(&Progress),
    cancel: &AtomicBool,
) -> umwelt::Result<RunSummary> {
    let report = bench::run(config, progress, cancel)?;
    if report.results.is_empty() {
        return Err(umwelt::Error::InvalidInput(
            "the benchmark was cancelled before anything was measured".into(),
        ));
    }
    runs.save(&report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_streams_progress_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        let config = BenchConfig {
            scenarios: vec!["recall".into(), "turnlog".into()],
            sizes: vec![200],
            iterations: Some(3),
            ..Default::default()
        };
        let mut seen = Vec::new();
        let kept = run_and_keep(
            &runs,
            &config,
            &mut |p| seen.push(p.clone()),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(
            seen.iter()
                .map(|p| (p.scenario.as_str(), p.done, p.total))
                .collect::<Vec<_>>(),
            [("recall", 0, 2), ("turnlog", 1, 2), ("", 2, 2)]
        );
        assert_eq!(kept.rows, 4);
        assert_eq!(runs.list().unwrap()[0].id, kept.id);
        assert_eq!(
            runs.get(kept.id).unwrap().command,
            "umwelt-cli bench --scenario recall,turnlog --sizes 200 --iterations 3"
        );
    }

    #[test]
    fn cancel_stops_within_an_iteration_and_keeps_what_was_measured() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        let cancel = AtomicBool::new(false);
        let config = BenchConfig {
            scenarios: vec!["recall".into()],
            sizes: vec![200, 50_000],
            iterations: Some(3),
            ..Default::default()
        };
        // Cancel as the second step starts: building its 50 000-memory corpus stops within a batch.
        let mut cancelled_at = None;
        let kept = run_and_keep(
            &runs,
            &config,
            &mut |p| {
                if p.done == 1 {
                    cancel.store(true, Ordering::Relaxed);
                    cancelled_at = Some(std::time::Instant::now());
                }
            },
            &cancel,
        )
        .unwrap();
        let waited = cancelled_at.unwrap().elapsed();
        assert!(waited.as_secs_f64() < 1.0, "cancel took {waited:?}");
        let report = runs.get(kept.id).unwrap();
        assert!(
            report.results.iter().all(|m| m.size == 200),
            "{:?}",
            report.results
        );
        // Cancelled before anything: nothing kept, a clear message.
        let cancel = AtomicBool::new(true);
        let e = run_and_keep(&runs, &config, &mut |_| {}, &cancel)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cancelled"), "{e}");
        assert_eq!(runs.list().unwrap().len(), 1);
    }

    #[test]
    fn cancel_during_warm_up_keeps_nothing_and_says_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        let cancel = AtomicBool::new(false);
        // turnlog builds no corpus: Cancel, set as its step starts, lands in its warm-up.
        let config = BenchConfig {
            scenarios: vec!["turnlog".into()],
            iterations: Some(3),
            warmup: Some(3),
            ..Default::default()
        };
        let e = run_and_keep(
            &runs,
            &config,
            &mut |_| cancel.store(true, Ordering::Relaxed),
            &cancel,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cancelled"), "{e}");
        assert!(
            runs.list().unwrap().is_empty(),
            "a run without samples was kept"
        );
    }

    #[test]
    fn only_one_run_at_a_time() {
        let state = BenchState::default();
        let g = BenchGuard::acquire(&state).unwrap();
        assert!(BenchGuard::acquire(&state).is_err());
        drop(g);
        assert!(BenchGuard::acquire(&state).is_ok());
    }
}
