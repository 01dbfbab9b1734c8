//! Drafts: open one on main or on another draft (to any depth), merge it into its parent, or
//! discard it. A draft's rows live in `draft_holding`; claims made in it carry its id until it
//! reaches main, so nobody outside it sees them.

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::Serialize;

use super::view::{draft_row, resolve, DRAFT_COLS};
use super::write::{put, retract};
use super::{DraftId, View};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::store::{write_tx, Store};

/// Where a draft stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DraftState {
    Open,
    Merged,
    Discarded,
}

impl DraftState {
    /// The state as the `draft.state` column spells it.
    pub(super) fn parse(column: &str) -> DraftState {
        match column {
            "merged" => DraftState::Merged,
            "discarded" => DraftState::Discarded,
            _ => DraftState::Open,
        }
    }
}

fn state(conn: &Connection, d: DraftId) -> Result<(Option<DraftId>, DraftState)> {
    let (parent, s): (Option<DraftId>, String) = conn
        .prepare_cached("SELECT parent, state FROM draft WHERE id = ?1")?
        .query_row([d], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .ok_or_else(|| Error::NotFound(format!("draft {d}")))?;
    Ok((parent, DraftState::parse(&s)))
}

/// Drop a draft's rows and the claims made in it (seen only in it and the drafts opened on it),
/// from the full-text index too. Its state is the caller's to set.
pub(super) fn drop_contents(tx: &Transaction, draft: DraftId) -> Result<()> {
    tx.prepare_cached("DELETE FROM draft_holding WHERE draft_id = ?1")?
        .execute([draft])?;
    tx.prepare_cached(
        "INSERT INTO claim_fts(claim_fts, rowid, text) SELECT 'delete', id, text FROM claim WHERE draft_id = ?1",
    )?
    .execute([draft])?;
    tx.prepare_cached("DELETE FROM claim WHERE draft_id = ?1")?
        .execute([draft])?;
    Ok(())
}

impl Store {
    /// Open a draft on main (`parent: None`) or on an open draft.
    pub fn open_draft(&self, parent: Option<DraftId>) -> Result<DraftId> {
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        if let Some(p) = parent {
            // Reading through it checks it and every draft under it.
            resolve(&tx, &View::in_draft(p))?;
        }
        tx.execute(
            "INSERT INTO draft(parent, created_at) VALUES (?1, ?2)",
            params![parent, now_ms()],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Merge an open draft into its parent (the nearest one not itself merged, or main), in
    /// one transaction: its puts and retractions become the parent's. Drafts opened on it read
    /// on through to the parent.
    pub fn merge_draft(&self, draft: DraftId) -> Result<()> {
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let chain = resolve(&tx, &View::in_draft(draft))?.chain;
        // The draft itself is first; the next open one below it is where it merges.
        let into = chain.get(1).copied();
        let rows = tx
            .prepare_cached(&format!(
                "SELECT {DRAFT_COLS} FROM draft_holding WHERE draft_id = ?1"
            ))?
            .query_map([draft], draft_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (row, retracted) in rows {
            if retracted {
                match into {
                    Some(_) => retract(&tx, into, row.holder, row.claim)?,
                    None => retract(&tx, None, row.holder, row.claim)?,
                }
            } else {
                let axes = row.axes.clone().unwrap_or_else(|| "{}".into());
                put(&tx, into, &row, &axes)?;
            }
        }
        tx.execute("DELETE FROM draft_holding WHERE draft_id = ?1", [draft])?;
        tx.execute(
            "UPDATE claim SET draft_id = ?2 WHERE draft_id = ?1",
            params![draft, into],
        )?;
        tx.execute("UPDATE draft SET state = 'merged' WHERE id = ?1", [draft])?;
        tx.commit()?;
        drop(conn);
        self.claims_moved(draft, into);
        Ok(())
    }

    /// Discard an open draft: its rows are dropped, and the claims made in it that nothing else
    /// holds go with them. Drafts opened on it can no longer be read or merged.
    pub fn discard_draft(&self, draft: DraftId) -> Result<()> {
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let (_, s) = state(&tx, draft)?;
        if s != DraftState::Open {
            return Err(Error::InvalidInput(format!(
                "draft {draft} was already {}: there is nothing to discard",
                if s == DraftState::Merged {
                    "merged"
                } else {
                    "discarded"
                }
            )));
        }
        drop_contents(&tx, draft)?;
        tx.execute(
            "UPDATE draft SET state = 'discarded' WHERE id = ?1",
            [draft],
        )?;
        tx.commit()?;
        Ok(())
    }
}
