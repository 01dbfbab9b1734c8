//! The performance dashboard: run the engine's benchmark scenarios (never on the user's
//! memories), keep every run, compare two, import and export, and read the real timings.

use std::sync::atomic::Ordering;

use tauri::ipc::Channel;
use tauri::State;
use umwelt::bench::{self, BenchConfig, Delta, Machine, Progress, Report, ScenarioView};
use umwelt::perf_db::{RunSummary, TimingKind, TimingSeries};

use super::blocking;
use crate::error::{CmdResult, CommandError, ErrorKind};
use crate::managers::bench::{run_and_keep, BenchGuard, Busy};
use crate::state::AppState;

/// The scenarios the harness knows.
#[tauri::command]
#[specta::specta]
pub fn bench_scenarios() -> Vec<ScenarioView> {
    bench::scenarios()
}

/// The machine the app runs on.
#[tauri::command]
#[specta::specta]
pub async fn machine() -> CmdResult<Machine> {
    blocking(|| Ok(Machine::current())).await
}

/// Run a suite, streaming progress; the finished run is kept. One run at a time.
#[tauri::command]
#[specta::specta]
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
                // The window may have gone (closed mid-run): the run goes on and is kept.
                let _window_gone = on_progress.send(p.clone());
            },
            &cancel,
        )
    })
    .await
}

/// Stop the running suite (within one iteration); what was measured is kept.
#[tauri::command]
#[specta::specta]
pub fn cancel_bench(state: State<'_, AppState>) {
    state.bench.cancel.store(true, Ordering::Relaxed);
}

#[tauri::command]
#[specta::specta]
pub async fn list_runs(state: State<'_, AppState>) -> CmdResult<Vec<RunSummary>> {
    let runs = state.runs.clone();
    blocking(move || runs.list()).await
}

#[tauri::command]
#[specta::specta]
pub async fn get_run(state: State<'_, AppState>, id: i64) -> CmdResult<Report> {
    let runs = state.runs.clone();
    blocking(move || runs.get(id)).await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_run(state: State<'_, AppState>, id: i64) -> CmdResult<()> {
    let runs = state.runs.clone();
    blocking(move || runs.delete(id)).await
}

/// Before → after per scenario.
#[tauri::command]
#[specta::specta]
pub async fn compare_runs(
    state: State<'_, AppState>,
    before: i64,
    after: i64,
) -> CmdResult<Vec<Delta>> {
    let runs = state.runs.clone();
    blocking(move || Ok(bench::compare(&runs.get(before)?, &runs.get(after)?))).await
}

/// Keep a run from a JSON text (`umwelt-cli bench --json`); a bad file changes nothing.
#[tauri::command]
#[specta::specta]
pub async fn import_run(state: State<'_, AppState>, json: String) -> CmdResult<RunSummary> {
    let runs = state.runs.clone();
    blocking(move || runs.import(&json)).await
}

/// How a run is written out.
#[derive(Debug, Clone, Copy, serde::Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Lossless (`umwelt-cli bench --json`), for importing again.
    Json,
    /// The tables of docs/PERFORMANCE.md.
    Markdown,
}

impl ExportFormat {
    /// `report` written out, and the file extension for it.
    fn render(self, report: &Report) -> (String, &'static str) {
        match self {
            ExportFormat::Json => (
                serde_json::to_string_pretty(report).expect("a report serialises"),
                "json",
            ),
            ExportFormat::Markdown => (bench::render_markdown(report), "md"),
        }
    }
}

/// A run as JSON or Markdown.
#[tauri::command]
#[specta::specta]
pub async fn export_run(
    state: State<'_, AppState>,
    id: i64,
    format: ExportFormat,
) -> CmdResult<String> {
    let runs = state.runs.clone();
    blocking(move || Ok(format.render(&runs.get(id)?).0)).await
}

/// Save a run as a file in the user's Downloads folder (or data folder); returns the path.
#[tauri::command]
#[specta::specta]
pub async fn save_run(
    state: State<'_, AppState>,
    id: i64,
    format: ExportFormat,
) -> CmdResult<String> {
    let runs = state.runs.clone();
    blocking(move || {
        let report = runs.get(id)?;
        let (text, ext) = format.render(&report);
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
#[specta::specta]
pub async fn real_timings(state: State<'_, AppState>) -> CmdResult<Vec<TimingSeries>> {
    let runs = state.runs.clone();
    blocking(move || TimingKind::ALL.iter().map(|k| runs.timings(*k)).collect()).await
}

impl From<Busy> for CommandError {
    fn from(_: Busy) -> CommandError {
        CommandError::new(
            ErrorKind::Busy,
            "a benchmark is already running: wait for it or press Cancel",
        )
    }
}
