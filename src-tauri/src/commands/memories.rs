//! The memory browser: the list a page at a time, search, one memory (edit, versions, restore),
//! delete with Undo, sessions, and forgetting a session or everything.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tauri::State;
use umwelt::clock::now_ms;
use umwelt::perf_db::TimingKind;
use umwelt::store::{
    journal::{Message, Turn},
    Cursor, Filter, Page, SearchHit, SessionSummary, Version,
};
use umwelt::{Hit, Memory, MemoryId};

use super::blocking;
use crate::error::CmdResult;
use crate::managers::forgetting::Forget;
use crate::state::AppState;

/// The search box: the `k` memories that best answer `query` by its words and its meaning
/// (hybrid, exact phrases first) among those `filter` keeps, each with why it ranked where it
/// did. Its time is kept as the dashboard's real "recall" timing.
#[tauri::command]
#[specta::specta]
pub async fn search(
    state: State<'_, AppState>,
    query: String,
    k: u32,
    filter: Filter,
) -> CmdResult<Vec<SearchHit>> {
    let (store, scope, runs, forgetting) = (
        state.store.clone(),
        state.scope.clone(),
        state.runs.clone(),
        state.forgetting.clone(),
    );
    blocking(move || {
        let mut hits = timed_search(&runs, || {
            store.search_in(&query, &scope, &filter, k as usize)
        })?;
        hits.retain(|h| !forgetting.is_waiting(h.memory.id));
        Ok(hits)
    })
    .await
}

/// Run a search, keeping its time as the dashboard's real "recall" timing. The time is written
/// on another thread: the window does not wait for the performance database.
fn timed_search<T>(
    runs: &Arc<umwelt::perf_db::Runs>,
    search: impl FnOnce() -> umwelt::Result<T>,
) -> umwelt::Result<T> {
    let t = Instant::now();
    let hits = search()?;
    let (ms, runs) = (t.elapsed().as_secs_f64() * 1e3, runs.clone());
    tauri::async_runtime::spawn_blocking(move || {
        if let Err(e) = runs.record(TimingKind::Recall, now_ms(), ms) {
            tracing::warn!("the search's time was not recorded: {e}");
        }
    });
    Ok(hits)
}

/// A page of memories that `filter` keeps, newest first, after `after` (`null`: the first).
#[tauri::command]
#[specta::specta]
pub async fn list_memories(
    state: State<'_, AppState>,
    filter: Filter,
    limit: u32,
    after: Option<Cursor>,
) -> CmdResult<Page> {
    let (store, scope, forgetting) = (
        state.store.clone(),
        state.scope.clone(),
        state.forgetting.clone(),
    );
    blocking(move || {
        let mut page = store.page(&scope, &filter, limit as usize, after)?;
        page.memories.retain(|m| !forgetting.is_waiting(m.id));
        Ok(page)
    })
    .await
}

/// How many memories `filter` keeps (what "Forget" would take).
#[tauri::command]
#[specta::specta]
pub async fn count_memories(state: State<'_, AppState>, filter: Filter) -> CmdResult<u32> {
    let (forgetting, scope) = (state.forgetting.clone(), state.scope.clone());
    blocking(move || Ok(forgetting.count_shown(&scope, &filter)? as u32)).await
}

/// One memory.
#[tauri::command]
#[specta::specta]
pub async fn get_memory(state: State<'_, AppState>, id: MemoryId) -> CmdResult<Memory> {
    let store = state.store.clone();
    blocking(move || store.get(id)).await
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

/// Replace a memory's text (re-embedded and re-indexed; the old text kept as a version).
#[tauri::command]
#[specta::specta]
pub async fn edit_memory(
    state: State<'_, AppState>,
    id: MemoryId,
    text: String,
) -> CmdResult<Memory> {
    let store = state.store.clone();
    blocking(move || store.edit(id, &text)).await
}

/// A memory's earlier texts, oldest first.
#[tauri::command]
#[specta::specta]
pub async fn memory_versions(state: State<'_, AppState>, id: MemoryId) -> CmdResult<Vec<Version>> {
    let store = state.store.clone();
    blocking(move || store.versions(id)).await
}

/// Make an earlier text current again (the text it replaces is kept as a version too).
#[tauri::command]
#[specta::specta]
pub async fn restore_version(
    state: State<'_, AppState>,
    id: MemoryId,
    version: i64,
) -> CmdResult<Memory> {
    let store = state.store.clone();
    blocking(move || store.restore(id, version)).await
}

/// Search by meaning.
#[tauri::command]
#[specta::specta]
pub async fn recall(state: State<'_, AppState>, query: String, k: u32) -> CmdResult<Vec<Hit>> {
    let (store, scope, runs, forgetting) = (
        state.store.clone(),
        state.scope.clone(),
        state.runs.clone(),
        state.forgetting.clone(),
    );
    blocking(move || {
        let mut hits = timed_search(&runs, || store.recall(&query, &scope, None, k as usize))?;
        hits.retain(|h| !forgetting.is_waiting(h.memory.id));
        Ok(hits)
    })
    .await
}

/// Delete one memory. It leaves the window now and the store after the Undo time
/// (`managers::forgetting`), unless `undo_delete` brings it back first.
#[tauri::command]
#[specta::specta]
pub async fn delete_memory(state: State<'_, AppState>, id: MemoryId) -> CmdResult<()> {
    let forgetting = state.forgetting.clone();
    blocking(move || forgetting.delete_later(id)).await
}

/// Bring back a memory deleted moments ago.
#[tauri::command]
#[specta::specta]
pub async fn undo_delete(state: State<'_, AppState>, id: MemoryId) -> CmdResult<Memory> {
    let forgetting = state.forgetting.clone();
    blocking(move || forgetting.undo(id)).await
}

/// The sessions, latest activity first.
#[tauri::command]
#[specta::specta]
pub async fn list_sessions(state: State<'_, AppState>) -> CmdResult<Vec<SessionSummary>> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    let forgetting = state.forgetting.clone();
    blocking(move || {
        // Counted as the list shows them: deleted memories waiting out their Undo are not.
        let mut sessions = store.sessions(&scope)?;
        for s in &mut sessions {
            let only = Filter {
                session: Some(s.name.clone()),
                ..Filter::default()
            };
            s.memories = forgetting.count_shown(&scope, &only)? as u32;
        }
        Ok(sessions)
    })
    .await
}

/// A session's history and turn log.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct SessionLog {
    pub messages: Vec<Message>,
    pub turns: Vec<Turn>,
}

/// The latest `limit` messages and turns of a session.
#[tauri::command]
#[specta::specta]
pub async fn session_log(
    state: State<'_, AppState>,
    session: String,
    limit: u32,
) -> CmdResult<SessionLog> {
    let (store, scope) = (state.store.clone(), state.scope.clone());
    blocking(move || {
        Ok(SessionLog {
            messages: store.history(&scope, &session, limit as usize)?,
            turns: store.turns(&scope, &session, limit as usize)?,
        })
    })
    .await
}

/// A forgetting of many memories, waiting out its Undo time.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Forgetting {
    /// What `undo_forget` takes.
    pub ticket: u32,
    pub memories: u32,
}

/// Forget a session: its memories, history and turn log, after the Undo time. `confirmed` is
/// the number of memories the user agreed would go; another number is refused.
#[tauri::command]
#[specta::specta]
pub async fn forget_session(
    state: State<'_, AppState>,
    session: String,
    confirmed: u32,
) -> CmdResult<Forgetting> {
    forget(&state, Forget::Session(session), confirmed).await
}

/// Forget everything: every memory, session, history and turn log of the notebook, after the
/// Undo time. `confirmed` as for `forget_session`.
#[tauri::command]
#[specta::specta]
pub async fn forget_everything(
    state: State<'_, AppState>,
    confirmed: u32,
) -> CmdResult<Forgetting> {
    forget(&state, Forget::Everything, confirmed).await
}

async fn forget(state: &AppState, what: Forget, confirmed: u32) -> CmdResult<Forgetting> {
    let (forgetting, scope) = (state.forgetting.clone(), state.scope.clone());
    blocking(move || {
        let ticket = forgetting.forget_later(&scope, what, confirmed)?;
        Ok(Forgetting {
            ticket: ticket as u32,
            memories: confirmed,
        })
    })
    .await
}

/// Bring back a session (or everything) forgotten moments ago; returns how many came back.
#[tauri::command]
#[specta::specta]
pub async fn undo_forget(state: State<'_, AppState>, ticket: u32) -> CmdResult<u32> {
    let forgetting = state.forgetting.clone();
    blocking(move || forgetting.undo_forget(ticket as u64)).await
}
