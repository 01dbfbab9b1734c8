//! Unsaved dictations are drafts of the user's holder. Each is a draft opened on main and named
//! after its recording; it holds one claim the holder authored, with the text heard so far, so a
//! read through the draft sees the user's notebook as it will be once the dictation is saved.
//! Saving writes the memory and settles the draft in the same transaction (merged, saying which
//! memory it became); discarding discards it. The recordings folder stays the record of what
//! was dictated ([`crate::speech::DictationDrafts`]): a draft whose recording is gone is discarded,
//! and one missing is made again, when the app starts.

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::Serialize;

use super::draft::{drop_contents, DraftState};
use super::{ClaimId, DraftId, HolderId};
use crate::error::{Error, Result};
use crate::store::{write_tx, MemoryId, Store};

/// An unsaved dictation's draft, as the file has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unsaved {
    pub draft: DraftId,
    pub state: DraftState,
    /// The holder who will hold it, and the claim with the text so far (none while nothing
    /// was heard).
    pub holder: Option<HolderId>,
    pub claim: Option<ClaimId>,
    /// The memory it became, once saved.
    pub saved_as: Option<MemoryId>,
}

fn find(conn: &Connection, name: &str) -> Result<Option<Unsaved>> {
    let row = conn
        .prepare_cached("SELECT id, state, saved_as FROM draft WHERE name = ?1")?
        .query_row([name], |r| {
            Ok((
                r.get::<_, DraftId>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })
        .optional()?;
    let Some((draft, state, saved_as)) = row else {
        return Ok(None);
    };
    let held: Option<(HolderId, ClaimId)> = conn
        .prepare_cached(
            "SELECT holder_id, claim_id FROM draft_holding WHERE draft_id = ?1 AND retracted = 0 LIMIT 1",
        )?
        .query_row([draft], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(Some(Unsaved {
        draft,
        state: DraftState::parse(&state),
        holder: held.map(|h| h.0),
        claim: held.map(|h| h.1),
        saved_as,
    }))
}

/// In a save's transaction: the unsaved dictation `name` became the memory `id`. Its draft's own
/// claim goes (the memory carries the user's edit of the text) and the draft is merged. What
/// was saved before answers `Some(memory)`: a save repeated gives the same memory.
pub(crate) fn settle(
    tx: &Transaction,
    name: &str,
    id: Option<MemoryId>,
) -> Result<Option<MemoryId>> {
    let Some(u) = find(tx, name)? else {
        return Ok(None);
    };
    match (u.state, id) {
        (DraftState::Merged, _) => Ok(u.saved_as),
        (DraftState::Discarded, _) => Err(Error::NotFound(format!(
            "the dictation {name} (it was discarded)"
        ))),
        (DraftState::Open, None) => Ok(None),
        (DraftState::Open, Some(id)) => {
            drop_contents(tx, u.draft)?;
            tx.prepare_cached("UPDATE draft SET state = 'merged', saved_as = ?2 WHERE id = ?1")?
                .execute(params![u.draft, id])?;
            Ok(Some(id))
        }
    }
}

impl Store {
    /// Keep `text` as what the holder named `holder` will hold once the dictation `name` is
    /// saved. The first call opens the draft on main; a later one replaces its text (the old
    /// one was never on main, so nothing that anyone held is overwritten). An empty text leaves
    /// the draft holding nothing. A saved or discarded dictation is refused.
    pub fn put_unsaved(&self, name: &str, holder: &str, text: &str, at: i64) -> Result<DraftId> {
        super::check_name(name, "dictation")?;
        let holder = if holder.trim().is_empty() {
            crate::store::DEFAULT_SCOPE
        } else {
            holder.trim()
        };
        let text = text.trim();
        if !text.is_empty() {
            crate::store::memory::check_text(text)?;
        }
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let draft = match find(&tx, name)? {
            Some(u) if u.state != DraftState::Open => {
                return Err(Error::InvalidInput(format!(
                    "the dictation {name} was already {}",
                    if u.state == DraftState::Merged {
                        "saved"
                    } else {
                        "discarded"
                    }
                )))
            }
            Some(u) => {
                let same: bool = match u.claim {
                    Some(c) => tx
                        .prepare_cached("SELECT text = ?2 FROM claim WHERE id = ?1")?
                        .query_row(params![c, text], |r| r.get(0))?,
                    None => text.is_empty(),
                };
                if same {
                    return Ok(u.draft);
                }
                drop_contents(&tx, u.draft)?;
                u.draft
            }
            None => {
                tx.prepare_cached("INSERT INTO draft(created_at, name) VALUES (?1, ?2)")?
                    .execute(params![at, name])?;
                tx.last_insert_rowid()
            }
        };
        if !text.is_empty() {
            let holder_id: HolderId = tx
                .prepare_cached(
                    "INSERT INTO holder(name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id",
                )?
                .query_row(params![holder, at], |r| r.get(0))?;
            tx.prepare_cached(
                "INSERT INTO claim(text, created_at, source, draft_id) VALUES (?1, ?2, 'dictated', ?3)",
            )?
            .execute(params![text, at, draft])?;
            let claim = tx.last_insert_rowid();
            tx.prepare_cached("INSERT INTO claim_fts(rowid, text) VALUES (?1, ?2)")?
                .execute(params![claim, text])?;
            tx.prepare_cached(
                "INSERT INTO draft_holding(draft_id, holder_id, claim_id, since) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![draft, holder_id, claim, at])?;
        }
        tx.commit()?;
        Ok(draft)
    }

    /// The draft of the dictation `name`, if it has one.
    pub fn unsaved(&self, name: &str) -> Result<Option<Unsaved>> {
        find(&self.conn(), name)
    }

    /// The names of the dictations whose drafts are open.
    pub fn unsaved_names(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT name FROM draft WHERE name IS NOT NULL AND state = 'open' ORDER BY id",
        )?;
        let names = st
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(names)
    }

    /// Discard the draft of the dictation `name` (nothing to do if it has none, or it is
    /// discarded already).
    pub fn drop_unsaved(&self, name: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        match find(&tx, name)? {
            Some(u) if u.state == DraftState::Open => {
                drop_contents(&tx, u.draft)?;
                tx.prepare_cached("UPDATE draft SET state = 'discarded' WHERE id = ?1")?
                    .execute([u.draft])?;
            }
            Some(u) if u.state == DraftState::Merged => {
                return Err(Error::InvalidInput(format!(
                    "the dictation {name} was saved: forget its memory instead"
                )))
            }
            _ => {}
        }
        tx.commit()?;
        Ok(())
    }
}
