//! Reading through a view: main, or a draft (and so every draft it stands on), optionally as of
//! a position on a named axis. This file alone decides whether a holder holds a claim in a view;
//! every read and every search asks it.
//!
//! A draft's rows put or retract holdings. Read in draft D on C on main, a holding is what D says
//! of it, else what C says, else what main says. A merged draft has moved its rows into its
//! parent, so reading through it passes straight on; a discarded one cannot be read through.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{ClaimId, DraftId, HolderId, How};
use crate::error::{Error, Result};

/// Where a read looks: main or a draft, and optionally "as of" a position on an axis.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct View {
    pub draft: Option<DraftId>,
    pub axis: Option<AxisPos>,
}

/// "As of position `pos` on the axis `name`": only holdings placed on that axis at `pos` or
/// before are seen.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AxisPos {
    pub name: String,
    pub pos: i64,
}

impl View {
    /// Main, on record time.
    pub fn main() -> View {
        View::default()
    }

    /// Through a draft.
    pub fn in_draft(draft: DraftId) -> View {
        View {
            draft: Some(draft),
            axis: None,
        }
    }

    /// The same view, as of `pos` on the axis `name`.
    pub fn as_of(mut self, name: &str, pos: i64) -> View {
        self.axis = Some(AxisPos {
            name: name.to_string(),
            pos,
        });
        self
    }
}

/// A view checked against the file: the drafts to read through, nearest first.
pub(super) struct Resolved {
    pub chain: Vec<DraftId>,
    pub axis: Option<AxisPos>,
}

/// More ancestors than this means the file is damaged (the API cannot make a cycle).
const MAX_DEPTH: usize = 100_000;

/// Check `v` and find its chain of drafts.
pub(super) fn resolve(conn: &Connection, v: &View) -> Result<Resolved> {
    let mut chain = Vec::new();
    let mut next = v.draft;
    let mut st = conn.prepare_cached("SELECT parent, state FROM draft WHERE id = ?1")?;
    while let Some(d) = next {
        if chain.len() > MAX_DEPTH || chain.contains(&d) {
            return Err(Error::InvalidInput(format!(
                "the drafts under draft {} form a cycle: the file is damaged",
                v.draft.unwrap_or(d)
            )));
        }
        let (parent, state): (Option<DraftId>, String) = st
            .query_row([d], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("draft {d}")))?;
        match state.as_str() {
            "discarded" => {
                return Err(Error::InvalidInput(format!(
                    "draft {d} was discarded: it can no longer be read or written"
                )))
            }
            "merged" if Some(d) == v.draft => {
                return Err(Error::InvalidInput(format!(
                    "draft {d} was merged: read the draft it was merged into, or main"
                )))
            }
            // A merged ancestor's rows are now in its parent: pass through it.
            "merged" => {}
            _ => chain.push(d),
        }
        next = parent;
    }
    Ok(Resolved {
        chain,
        axis: v.axis.clone(),
    })
}

/// One holding as stored (main or a draft's row), before names are joined.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub holder: HolderId,
    pub claim: ClaimId,
    pub since: i64,
    pub how: How,
    pub teller: Option<HolderId>,
    pub strength: f64,
    pub session: String,
    /// A draft row's axis positions (JSON); `None` for a main row (read from `holding_axis`).
    pub axes: Option<String>,
}

/// The columns [`draft_row`] reads, in order.
pub(super) const DRAFT_COLS: &str =
    "holder_id, claim_id, since, provenance, teller, strength, session, axes, retracted";
/// The columns [`main_row`] reads, in order.
pub(super) const MAIN_COLS: &str =
    "holder_id, claim_id, since, provenance, teller, strength, session";

pub(super) fn main_row(r: &rusqlite::Row) -> rusqlite::Result<Row> {
    Ok(Row {
        holder: r.get(0)?,
        claim: r.get(1)?,
        since: r.get(2)?,
        how: How::parse(&r.get::<_, String>(3)?),
        teller: r.get(4)?,
        strength: r.get(5)?,
        session: r.get(6)?,
        axes: None,
    })
}

/// A draft row, and whether it retracts.
pub(super) fn draft_row(r: &rusqlite::Row) -> rusqlite::Result<(Row, bool)> {
    Ok((
        Row {
            holder: r.get(0)?,
            claim: r.get(1)?,
            since: r.get(2)?,
            how: How::parse(&r.get::<_, String>(3)?),
            teller: r.get(4)?,
            strength: r.get(5)?,
            session: r.get(6)?,
            axes: Some(r.get(7)?),
        },
        r.get::<_, i64>(8)? != 0,
    ))
}

/// The axis positions a draft row carries.
pub(super) fn parse_axes(json: &str) -> HashMap<String, i64> {
    serde_json::from_str(json).unwrap_or_default()
}

impl Resolved {
    /// Whether `row` is placed at or before the view's axis position (always, on record time).
    pub(super) fn on_axis(&self, conn: &Connection, row: &Row) -> Result<bool> {
        let Some(axis) = &self.axis else {
            return Ok(true);
        };
        let pos = match &row.axes {
            Some(json) => parse_axes(json).get(&axis.name).copied(),
            None => conn
                .prepare_cached(
                    "SELECT pos FROM holding_axis WHERE holder_id = ?1 AND claim_id = ?2 AND axis = ?3",
                )?
                .query_row(params![row.holder, row.claim, axis.name], |r| r.get(0))
                .optional()?,
        };
        Ok(pos.is_some_and(|p: i64| p <= axis.pos))
    }

    /// What the drafts of the chain say of `holder` holding `claim`, nearest first: `Some(None)`
    /// when a draft retracts it, `None` when no draft speaks of it.
    fn in_drafts(
        &self,
        conn: &Connection,
        holder: HolderId,
        claim: ClaimId,
    ) -> Result<Option<Option<Row>>> {
        if self.chain.is_empty() {
            return Ok(None);
        }
        let mut st = conn.prepare_cached(&format!(
            "SELECT {DRAFT_COLS} FROM draft_holding WHERE draft_id = ?1 AND holder_id = ?2 AND claim_id = ?3"
        ))?;
        for d in &self.chain {
            if let Some((row, retracted)) = st
                .query_row(params![d, holder, claim], draft_row)
                .optional()?
            {
                return Ok(Some((!retracted).then_some(row)));
            }
        }
        Ok(None)
    }

    /// The holding of `claim` by `holder` in this view, if it holds it.
    pub(super) fn holding(
        &self,
        conn: &Connection,
        holder: HolderId,
        claim: ClaimId,
    ) -> Result<Option<Row>> {
        let row = match self.in_drafts(conn, holder, claim)? {
            Some(r) => r,
            None => conn
                .prepare_cached(&format!(
                    "SELECT {MAIN_COLS} FROM holding WHERE holder_id = ?1 AND claim_id = ?2"
                ))?
                .query_row(params![holder, claim], main_row)
                .optional()?,
        };
        match row {
            Some(r) if self.on_axis(conn, &r)? => Ok(Some(r)),
            _ => Ok(None),
        }
    }

    /// Every draft row of the chain that `sql` selects (it takes the draft id as `?1` and `arg`
    /// as `?2`), the nearest draft's word kept for each holding: `None` is a retraction.
    pub(super) fn overlay(
        &self,
        conn: &Connection,
        sql: &str,
        arg: i64,
    ) -> Result<HashMap<(HolderId, ClaimId), Option<Row>>> {
        let mut out = HashMap::new();
        if self.chain.is_empty() {
            return Ok(out);
        }
        let mut st = conn.prepare_cached(sql)?;
        // Farthest first, so that a nearer draft's row replaces it.
        for d in self.chain.iter().rev() {
            for r in st.query_map(params![d, arg], draft_row)? {
                let (row, retracted) = r?;
                out.insert((row.holder, row.claim), (!retracted).then_some(row));
            }
        }
        Ok(out)
    }

    /// Whether a claim made in draft `made_in` (`None`: on main) can be seen in this view.
    pub(super) fn sees_claim(&self, made_in: Option<DraftId>) -> bool {
        made_in.is_none_or(|d| self.chain.contains(&d))
    }
}
