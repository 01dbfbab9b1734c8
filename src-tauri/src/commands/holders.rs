//! Who holds what in the window: the holders of a world (the user's notebook or the demo town),
//! what one holder knows with provenance, who knows what about an entity, who holds a claim,
//! and search scoped to a holder or to the narrator.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::State;
use umwelt::store::holdings::{
    ClaimHit, HeldBy, HolderId, HolderSummary, HoldingsPage, Listing, Reader, View, PAGE,
};
use umwelt::Store;

use super::{blocking, blocking_cmd};
use crate::error::{CmdResult, CommandError};
use crate::state::AppState;

/// Which file the Holders view reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum World {
    /// The user's own memory file.
    Notebook,
    /// The generated demo town, in a file of its own.
    DemoTown,
}

/// Building the demo town: days done of all.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TownProgress {
    pub done: u32,
    pub total: u32,
}

fn store_of(state: &AppState, world: World) -> umwelt::Result<Arc<Store>> {
    match world {
        World::Notebook => Ok(state.store.clone()),
        World::DemoTown => state.town.require(),
    }
}

/// Whether the demo town has been built.
#[tauri::command]
#[specta::specta]
pub fn demo_town_ready(state: State<'_, AppState>) -> CmdResult<bool> {
    Ok(state.town.store()?.is_some())
}

/// Build the demo town (in its own file, replacing an earlier one), with progress by day.
/// Cancel (`cancel_job`) stops it and keeps the earlier town.
#[tauri::command]
#[specta::specta]
pub async fn load_demo_town(
    state: State<'_, AppState>,
    on_progress: Channel<TownProgress>,
) -> CmdResult<()> {
    let (guard, cancel) = state.jobs.start()?;
    let town = state.town.clone();
    blocking_cmd(move || {
        let _guard = guard;
        town.build(&cancel, &mut |done, total| {
            let _window_gone = on_progress.send(TownProgress {
                done: done as u32,
                total: total as u32,
            });
        })
        .map_err(CommandError::from)
    })
    .await
}

/// The holders of a world, by name, with how many holdings each has.
#[tauri::command]
#[specta::specta]
pub async fn list_holders(
    state: State<'_, AppState>,
    world: World,
) -> CmdResult<Vec<HolderSummary>> {
    let store = store_of(&state, world)?;
    blocking(move || store.holder_summaries()).await
}

/// The entities the claims of a world are about, by name.
#[tauri::command]
#[specta::specta]
pub async fn list_entities(state: State<'_, AppState>, world: World) -> CmdResult<Vec<String>> {
    let store = store_of(&state, world)?;
    blocking(move || store.entities()).await
}

/// A page of what one holder holds, newest first, with provenance; `cursor` is the `next` of the
/// page before.
#[tauri::command]
#[specta::specta]
pub async fn holder_holdings(
    state: State<'_, AppState>,
    world: World,
    holder: HolderId,
    cursor: Option<String>,
) -> CmdResult<HoldingsPage> {
    let store = store_of(&state, world)?;
    blocking(move || {
        store.holdings(
            &Listing::Holder(holder),
            &View::main(),
            PAGE,
            cursor.as_deref(),
        )
    })
    .await
}

/// A page of who holds what about one entity, newest first.
#[tauri::command]
#[specta::specta]
pub async fn entity_holdings(
    state: State<'_, AppState>,
    world: World,
    entity: String,
    cursor: Option<String>,
) -> CmdResult<HoldingsPage> {
    let store = store_of(&state, world)?;
    blocking(move || {
        store.holdings(
            &Listing::About(entity),
            &View::main(),
            PAGE,
            cursor.as_deref(),
        )
    })
    .await
}

/// Everyone who holds a claim, earliest first, with how and from whom.
#[tauri::command]
#[specta::specta]
pub async fn who_holds(
    state: State<'_, AppState>,
    world: World,
    claim: i64,
) -> CmdResult<Vec<HeldBy>> {
    let store = store_of(&state, world)?;
    blocking(move || store.who_holds(&View::main(), claim)).await
}

/// Search what one holder holds (or, with no holder, every fact and event: the narrator) by
/// words and meaning; each hit says why it ranked where it did.
#[tauri::command]
#[specta::specta]
pub async fn search_claims(
    state: State<'_, AppState>,
    world: World,
    holder: Option<HolderId>,
    query: String,
    k: u32,
) -> CmdResult<Vec<ClaimHit>> {
    let store = store_of(&state, world)?;
    let reader = holder.map_or(Reader::Narrator, Reader::Holder);
    blocking(move || store.search_claims(reader, &View::main(), &query, None, k as usize)).await
}
