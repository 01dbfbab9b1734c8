//! Who holds what: the engine of the second seed, in the same file as the memories.
//!
//! A *claim* is one piece of knowledge (text, kind, the entities it is about, one vector), stored
//! once however many hold it. A *holder* holds it through a *holding*: since when, how strongly,
//! and how it came to be held (authored, told by another holder, witnessed). A user's memory is a
//! claim its holder authored, so the first seed's operations run on the same rows.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the types ([`Kind`], [`How`], [`Holding`], [`View`], the batches), checks, holder and entity names |
//! | `view.rs` | reading through a [`View`]: a draft's chain of overlays and an axis position; the one place that decides what a holder holds |
//! | `write.rs` | `commit`, `commit_batch`, `transmit_batch`, `witness`, `adjust_batch` (main or a draft) |
//! | `read.rs` | `holds`, `who_holds`, `holdings` by holder or by entity, a page and its cursor |
//! | `draft.rs` | opening, merging and discarding drafts |
//! | `unsaved.rs` | unsaved dictations, each a named draft of the user's holder |
//! | `vectors.rs` | `embedding_put`, and search by meaning and words over one holder or the narrator |
//!
//! Isolation is a filter, never a ranking hint: every read for a holder goes through
//! `view.rs`, which only ever yields holdings the holder has in that view.

mod draft;
mod read;
pub(crate) mod unsaved;
mod vectors;
mod view;
mod write;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use draft::DraftState;
pub use read::{HeldBy, HoldingsPage, Listing, PAGE};
pub use unsaved::Unsaved;
pub(crate) use vectors::HeldCodes;
pub use vectors::{ClaimHit, ClaimWhy, Reader};
pub use view::{AxisPos, View};

/// A holder's id (the first seed's scope, by another name).
pub type HolderId = i64;
/// A claim's id (the same number as a memory's id).
pub type ClaimId = i64;
/// A draft's id.
pub type DraftId = i64;

/// The most rows one batch may carry; more is refused before anything is written.
pub const MAX_BATCH: usize = 100_000;

/// What sort of knowledge a claim is. The narrator sees facts and events, not opinions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub enum Kind {
    #[default]
    Fact,
    Event,
    Opinion,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Event => "event",
            Kind::Opinion => "opinion",
        }
    }

    pub fn parse(s: &str) -> Result<Kind> {
        match s {
            "fact" => Ok(Kind::Fact),
            "event" => Ok(Kind::Event),
            "opinion" => Ok(Kind::Opinion),
            other => Err(Error::InvalidInput(format!(
                "'{other}' is not a kind of claim: use fact, event or opinion"
            ))),
        }
    }
}

/// How a holder came to hold a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub enum How {
    Authored,
    Told,
    Witnessed,
}

impl How {
    pub fn as_str(self) -> &'static str {
        match self {
            How::Authored => "authored",
            How::Told => "told",
            How::Witnessed => "witnessed",
        }
    }

    fn parse(s: &str) -> How {
        match s {
            "told" => How::Told,
            "witnessed" => How::Witnessed,
            _ => How::Authored,
        }
    }
}

/// One holding as a read returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Holding {
    pub holder: String,
    pub holder_id: HolderId,
    pub claim: ClaimId,
    pub text: String,
    pub kind: Kind,
    pub about: Vec<String>,
    pub how: How,
    /// Who told it (a telling's teller), by name.
    pub from: Option<String>,
    /// When it came to be held (unix ms).
    pub since: i64,
    pub strength: f64,
}

/// A new claim and its authoring holding.
#[derive(Debug, Clone, Default)]
pub struct NewClaim {
    pub holder: HolderId,
    pub text: String,
    pub kind: Kind,
    /// Entity names; an entity is made the first time it is named.
    pub about: Vec<String>,
    /// Positions on named axes.
    pub axes: Vec<(String, i64)>,
    /// When (unix ms); `None` is now.
    pub at: Option<i64>,
}

/// A telling: `from` passes `claim` to `to`, who then holds it as told by `from`.
#[derive(Debug, Clone, Copy)]
pub struct Telling {
    pub claim: ClaimId,
    pub from: HolderId,
    pub to: HolderId,
    /// When (unix ms); `None` is now.
    pub at: Option<i64>,
}

/// What a batch of tellings or witnessings did: holdings made, and those left alone because the
/// holder already held the claim (kept as they were: nothing is silently overwritten).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Written {
    pub made: usize,
    pub already_held: usize,
}

/// A holder, and how many holdings it has on main.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct HolderSummary {
    pub id: HolderId,
    pub name: String,
    pub holdings: u32,
}

/// A batch's size, checked before anything is written.
fn check_batch(n: usize, what: &str) -> Result<()> {
    if n == 0 {
        return Err(Error::InvalidInput(format!(
            "the batch of {what} is empty: there is nothing to write"
        )));
    }
    if n > MAX_BATCH {
        return Err(Error::InvalidInput(format!(
            "a batch of {n} {what} is more than {MAX_BATCH}: split it into smaller batches (nothing was written)"
        )));
    }
    Ok(())
}

/// A strength is a finite number from 0 to 1.
fn check_strength(s: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&s) {
        return Err(Error::InvalidInput(format!(
            "a strength is from 0 to 1, not {s}"
        )));
    }
    Ok(s)
}

/// A holder's or entity's name: not empty, not absurdly long.
fn check_name(name: &str, what: &str) -> Result<String> {
    let n = name.trim();
    if n.is_empty() || n.len() > 200 {
        return Err(Error::InvalidInput(format!(
            "a {what}'s name has 1 to 200 characters"
        )));
    }
    Ok(n.to_string())
}

impl super::Store {
    /// Add a holder, or find the one with that name.
    pub fn add_holder(&self, name: &str) -> Result<HolderId> {
        let name = check_name(name, "holder")?;
        let mut conn = self.conn();
        let tx = super::write_tx(&mut conn)?;
        let id = tx.query_row(
            "INSERT INTO holder(name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id",
            rusqlite::params![name, crate::clock::now_ms()],
            |r| r.get(0),
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// The holder named `name`; an error if there is none (never an empty success).
    pub fn holder(&self, name: &str) -> Result<HolderId> {
        self.holder_id(name)?
            .ok_or_else(|| Error::NotFound(format!("the holder '{name}'")))
    }

    /// Every holder with its number of holdings, by name.
    pub fn holder_summaries(&self) -> Result<Vec<HolderSummary>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT h.id, h.name, (SELECT count(*) FROM holding WHERE holder_id = h.id) FROM holder h ORDER BY h.name",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok(HolderSummary {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    holdings: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Every holder, by name.
    pub fn holders(&self) -> Result<Vec<(HolderId, String)>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached("SELECT id, name FROM holder ORDER BY name")?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Drop every vector and compact the file (the town's size "without vectors").
    pub fn drop_vectors_and_compact(&self) -> Result<()> {
        let conn = self.conn();
        conn.execute_batch("DELETE FROM claim_vector; PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")?;
        *self.claims.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.held_codes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(())
    }

    /// Every entity that some claim is about, by name.
    pub fn entities(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut st = conn.prepare_cached("SELECT name FROM entity ORDER BY name")?;
        let rows = st
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }
}
