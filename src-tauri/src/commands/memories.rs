//! Notes and search.

use std::time::Instant;

use tauri::State;
use umwelt::bench::TimingKind;
use umwelt::clock::now_ms;
use umwelt::store::SearchHit;
use umwelt::{Hit, Memory, MemoryId};

use super::blocking;
use crate::error::CmdResult;
use crate::state::AppState;

/// The search box: the `k` memories that best answer `query` by its words and its meaning
/// (hybrid, exact phrases first), each with why it ranked where it did. Its time is kept as the
/// dashboard's real "recall" timing.
#[tauri::command]
#[specta::specta]
pub async fn search(
    state: State<'_, AppState>,
    query: String,
    k: u32,
) -> CmdResult<Vec<SearchHit>> {
    let (store, scope, runs) = (state.store.clone(), state.scope.clone(), state.runs.clone());
    blocking(move || timed_search(&runs, || store.search(&query, &scope, None, k as usize))).await
}

/// Run a search, keeping its time as the dashboard's real "recall" timing.
fn timed_search<T>(
    runs: &umwelt::bench::Runs,
    search: impl FnOnce() -> umwelt::Result<T>,
) -> umwelt::Result<T> {
    let t = Instant::now();
    let hits = search()?;
    if let Err(e) = runs.record(
        TimingKind::Recall,
        now_ms(),
        t.elapsed().as_secs_f64() * 1e3,
    ) {
        tracing::warn!("the search's time was not recorded: {e}");
    }
    Ok(hits)
}

/// Memories, newest first; `before` (unix ms) pages back.
#[tauri::command]
#[specta::specta]
pub async fn list_memories(
    state: State<'_, AppState>,
    limit: u32,
    before: Option<i64>,
) -> CmdResult<Vec<Memory>> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || store.list(&scope, limit as usize, before)).await
}

/// Remember a typed note.
#[tauri::command]
#[specta::specta]
pub async fn remember(state: State<'_, AppState>, text: String) -> CmdResult<Memory> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || {
        store
            .remember(&scope, "", &text)
            .and_then(|id| store.get(id))
    })
    .await
}

/// Search by meaning.
#[tauri::command]
#[specta::specta]
pub async fn recall(state: State<'_, AppState>, query: String, k: u32) -> CmdResult<Vec<Hit>> {
    let (store, scope, runs) = (state.store.clone(), state.scope.clone(), state.runs.clone());
    blocking(move || timed_search(&runs, || store.recall(&query, &scope, None, k as usize))).await
}

/// Forget one memory.
#[tauri::command]
#[specta::specta]
pub async fn delete_memory(state: State<'_, AppState>, id: MemoryId) -> CmdResult<()> {
    let store = state.store.clone();
    blocking(move || store.delete(id)).await
}
