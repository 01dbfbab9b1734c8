//! The performance dashboard: run the engine's benchmark scenarios (never on the user's
//! memories), keep every run, compare two, import and export, and read the real timings.

use std::sync::atomic::Ordering;

use tauri::ipc::Channel;
use tauri::State;
use umwelt::bench::{
    self, BenchConfig, Delta, Machine, Progress, Report, RunSummary, ScenarioView, TimingSeries,
};

use super::blocking;
use crate::error::{CmdResult, CommandError};
use crate::perf::{run_and_keep, BenchGuard, TIMING_KINDS};
use crate::state::AppState;

/// The scenarios the harness knows.
#[tauri::command]
pub fn bench_scenarios() -> Vec<ScenarioView> {
    bench::scenarios()
}

/// The machine the app runs on.
#[tauri::command]
pub async fn machine() -> CmdResult<Machine> {
    blocking(|| Ok(Machine::current())).await
}

/// Run a suite, streaming progress; the finished run is kept. One run at a time.
#[tauri::command]
pub async fn run_bench(
    state: State<'_, AppState>,
    config: BenchConfig,
    on_progress: Channel<Progress>,
) -> CmdResult<RunSummary> {
    let guard = BenchGuard::acquire(&state.bench)?;
    let runs = state.runs.clone();
    let cancel = state.bench.cancel.clone();
    blocking(move || {
        let _guard = guard;
        run_and_keep(
            &runs,
            &config,
            &mut |p| {
                let _ = on_progress.send(p.clone());
            },
            &cancel,
        )
    })
    .await
}

/// Stop the running suite (within one iteration); what was measured is kept.
#[tauri::command]
pub fn cancel_bench(state: State<'_, AppState>) {
    state.bench.cancel.store(true, Ordering::Relaxed);
}

#[tauri::command]
pub async fn list_runs(state: State<'_, AppState>) -> CmdResult<Vec<RunSummary>> {
    let runs = state.runs.clone();
    blocking(move || runs.list()).await
}

#[tauri::command]
pub async fn get_run(state: State<'_, AppState>, id: f64) -> CmdResult<Report> {
    let runs = state.runs.clone();
    blocking(move || runs.get(id as i64)).await
}

#[tauri::command]
pub async fn delete_run(state: State<'_, AppState>, id: f64) -> CmdResult<()> {
    let runs = state.runs.clone();
    blocking(move || runs.delete(id as i64)).await
}

/// Before → after per scenario.
#[tauri::command]
pub async fn compare_runs(
    state: State<'_, AppState>,
    before: f64,
    after: f64,
) -> CmdResult<Vec<Delta>> {
    let runs = state.runs.clone();
    blocking(move || {
        Ok(bench::compare(
            &runs.get(before as i64)?,
            &runs.get(after as i64)?,
        ))
    })
    .await
}

/// Keep a run from a JSON text (`umwelt-cli bench --json`); a bad file changes nothing.
#[tauri::command]
pub async fn import_run(state: State<'_, AppState>, json: String) -> CmdResult<RunSummary> {
    let runs = state.runs.clone();
    blocking(move || runs.import(&json)).await
}

/// A run as `json` or `markdown` (the tables of docs/PERFORMANCE.md).
#[tauri::command]
pub async fn export_run(state: State<'_, AppState>, id: f64, format: String) -> CmdResult<String> {
    let runs = state.runs.clone();
    blocking(move || {
        let report = runs.get(id as i64)?;
        match format.as_str() {
            "json" => Ok(serde_json::to_string_pretty(&report).expect("a report serialises")),
            "markdown" => Ok(bench::render_markdown(&report)),
            other => Err(umwelt::Error::InvalidInput(format!(
                "unknown export format '{other}': use json or markdown"
            ))),
        }
    })
    .await
}

/// Save a run as a file in the user's Downloads folder (or data folder); returns the path.
#[tauri::command]
pub async fn save_run(state: State<'_, AppState>, id: f64, format: String) -> CmdResult<String> {
    let runs = state.runs.clone();
    blocking(move || {
        let report = runs.get(id as i64)?;
        let (text, ext) = match format.as_str() {
            "json" => (
                serde_json::to_string_pretty(&report).expect("a report serialises"),
                "json",
            ),
            "markdown" => (bench::render_markdown(&report), "md"),
            other => {
                return Err(umwelt::Error::InvalidInput(format!(
                    "unknown export format '{other}': use json or markdown"
                )))
            }
        };
        let dir = dirs::download_dir().unwrap_or_else(umwelt::paths::data_dir);
        std::fs::create_dir_all(&dir).map_err(|e| umwelt::Error::Io {
            context: format!("creating {}", dir.display()),
            source: e,
        })?;
        let path = dir.join(format!("umwelt-bench-{}.{ext}", report.started_at));
        std::fs::write(&path, text).map_err(|e| umwelt::Error::Io {
            context: format!("writing {}", path.display()),
            source: e,
        })?;
        Ok(path.display().to_string())
    })
    .await
}

/// Timings of real operations, per kind.
#[tauri::command]
pub async fn real_timings(state: State<'_, AppState>) -> CmdResult<Vec<TimingSeries>> {
    let runs = state.runs.clone();
    blocking(move || TIMING_KINDS.iter().map(|k| runs.timings(k)).collect()).await
}

impl From<crate::perf::Busy> for CommandError {
    fn from(_: crate::perf::Busy) -> CommandError {
        CommandError::new(
            "busy",
            "a benchmark is already running: wait for it or press Cancel",
        )
    }
}
