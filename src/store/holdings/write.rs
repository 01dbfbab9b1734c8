//! Writes: claims and their authoring holdings, tellings, witnessings, strengths, retractions.
//! Each batch is one transaction, checked whole before its first row: all or nothing. In a draft
//! the holdings go to the draft's own rows and main is untouched until the draft is merged.

use std::collections::{HashMap, HashSet};

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use super::view::{resolve, Resolved, Row};
use super::{
    check_batch, check_strength, ClaimId, DraftId, HolderId, How, NewClaim, Telling, View, Written,
};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::store::memory::check_text;
use crate::store::{write_tx, Store};

/// Every holder id in `ids` exists, or the first unknown one is named.
fn check_holders(conn: &Connection, ids: impl IntoIterator<Item = HolderId>) -> Result<()> {
    let mut st = conn.prepare_cached("SELECT 1 FROM holder WHERE id = ?1")?;
    let mut seen = HashSet::new();
    for id in ids {
        if seen.insert(id) && !st.exists([id])? {
            return Err(Error::NotFound(format!("holder {id}")));
        }
    }
    Ok(())
}

/// Every claim in `ids` exists and can be seen in the view, or the first that cannot is named.
pub(super) fn check_claims(
    conn: &Connection,
    view: &Resolved,
    ids: impl IntoIterator<Item = ClaimId>,
) -> Result<()> {
    let mut st = conn.prepare_cached("SELECT draft_id FROM claim WHERE id = ?1")?;
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            continue;
        }
        let made_in: Option<Option<DraftId>> = st.query_row([id], |r| r.get(0)).optional()?;
        match made_in {
            Some(d) if view.sees_claim(d) => {}
            _ => return Err(Error::NotFound(format!("claim {id}"))),
        }
    }
    Ok(())
}

/// The view a write goes to (its draft, if any), checked; writes ignore axes.
fn write_view(conn: &Connection, view: &View) -> Result<Resolved> {
    let mut r = resolve(conn, view)?;
    r.axis = None;
    Ok(r)
}

/// The positions of a main holding on its axes, as a draft row stores them.
fn axes_json(conn: &Connection, row: &Row) -> Result<String> {
    if let Some(j) = &row.axes {
        return Ok(j.clone());
    }
    let mut st = conn.prepare_cached(
        "SELECT axis, pos FROM holding_axis WHERE holder_id = ?1 AND claim_id = ?2",
    )?;
    let axes: HashMap<String, i64> = st
        .query_map(params![row.holder, row.claim], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(serde_json::to_string(&axes).expect("a map of numbers"))
}

/// Put a holding, in the view's draft or on main. On main an existing holding is replaced (the
/// callers only do so to change its strength, or on a merge).
pub(super) fn put(tx: &Transaction, draft: Option<DraftId>, row: &Row, axes: &str) -> Result<()> {
    match draft {
        Some(d) => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO draft_holding(draft_id, holder_id, claim_id, retracted, session, since, provenance, teller, strength, axes)
                 VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                d,
                row.holder,
                row.claim,
                row.session,
                row.since,
                row.how.as_str(),
                row.teller,
                row.strength,
                axes
            ])?;
        }
        None => {
            let mut del =
                tx.prepare_cached("DELETE FROM holding WHERE holder_id = ?1 AND claim_id = ?2")?;
            del.execute(params![row.holder, row.claim])?;
            tx.prepare_cached(
                "INSERT INTO holding(holder_id, claim_id, session, since, provenance, teller, strength)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                row.holder,
                row.claim,
                row.session,
                row.since,
                row.how.as_str(),
                row.teller,
                row.strength
            ])?;
            let positions = super::view::parse_axes(axes);
            let mut ax = tx.prepare_cached(
                "INSERT INTO holding_axis(holder_id, claim_id, axis, pos) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (name, pos) in positions {
                ax.execute(params![row.holder, row.claim, name, pos])?;
            }
        }
    }
    Ok(())
}

/// Retract a holding: a draft row that hides it, or on main the holding removed.
pub(super) fn retract(
    tx: &Transaction,
    draft: Option<DraftId>,
    holder: HolderId,
    claim: ClaimId,
) -> Result<()> {
    match draft {
        Some(d) => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO draft_holding(draft_id, holder_id, claim_id, retracted, since) VALUES (?1, ?2, ?3, 1, ?4)",
            )?
            .execute(params![d, holder, claim, now_ms()])?;
        }
        None => {
            tx.prepare_cached("DELETE FROM holding WHERE holder_id = ?1 AND claim_id = ?2")?
                .execute(params![holder, claim])?;
        }
    }
    Ok(())
}

impl Store {
    /// Write one claim and its authoring holding.
    pub fn commit(&self, view: &View, claim: NewClaim) -> Result<ClaimId> {
        Ok(self.commit_batch(view, &[claim])?[0])
    }

    /// Write claims and their authoring holdings in one transaction; their ids, in order.
    pub fn commit_batch(&self, view: &View, claims: &[NewClaim]) -> Result<Vec<ClaimId>> {
        check_batch(claims.len(), "claims")?;
        let mut texts = Vec::with_capacity(claims.len());
        for c in claims {
            texts.push(check_text(&c.text)?);
            for e in &c.about {
                super::check_name(e, "entity")?;
            }
        }
        let now = now_ms();
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        check_holders(&tx, claims.iter().map(|c| c.holder))?;
        let view = write_view(&tx, view)?;
        let draft = view.chain.first().copied();
        let mut ids = Vec::with_capacity(claims.len());
        {
            let mut claim_st = tx.prepare_cached(
                "INSERT INTO claim(text, kind, created_at, draft_id) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut fts_st =
                tx.prepare_cached("INSERT INTO claim_fts(rowid, text) VALUES (?1, ?2)")?;
            let mut entity_st = tx.prepare_cached(
                "INSERT INTO entity(name) VALUES (?1) ON CONFLICT(name) DO UPDATE SET name = name RETURNING id",
            )?;
            let mut about_st = tx.prepare_cached(
                "INSERT OR IGNORE INTO claim_about(claim_id, entity_id) VALUES (?1, ?2)",
            )?;
            let mut entities: HashMap<String, i64> = HashMap::new();
            for (c, text) in claims.iter().zip(&texts) {
                let at = c.at.unwrap_or(now);
                claim_st.execute(params![text, c.kind.as_str(), at, draft])?;
                let id = tx.last_insert_rowid();
                fts_st.execute(params![id, text])?;
                for name in &c.about {
                    let name = name.trim();
                    let e = match entities.get(name) {
                        Some(&e) => e,
                        None => {
                            let e: i64 = entity_st.query_row([name], |r| r.get(0))?;
                            entities.insert(name.to_string(), e);
                            e
                        }
                    };
                    about_st.execute(params![id, e])?;
                }
                let row = Row {
                    holder: c.holder,
                    claim: id,
                    since: at,
                    how: How::Authored,
                    teller: None,
                    strength: 1.0,
                    session: String::new(),
                    axes: None,
                };
                let axes: HashMap<&str, i64> =
                    c.axes.iter().map(|(n, p)| (n.as_str(), *p)).collect();
                put(
                    &tx,
                    draft,
                    &row,
                    &serde_json::to_string(&axes).expect("map"),
                )?;
                ids.push(id);
            }
        }
        tx.commit()?;
        Ok(ids)
    }

    /// Tellings in one transaction. Each teller must hold what it tells (else nothing is
    /// written); a listener who already holds the claim keeps its holding as it was.
    pub fn transmit_batch(&self, view: &View, tellings: &[Telling]) -> Result<Written> {
        check_batch(tellings.len(), "tellings")?;
        let now = now_ms();
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        check_holders(&tx, tellings.iter().flat_map(|t| [t.from, t.to]))?;
        let view = write_view(&tx, view)?;
        check_claims(&tx, &view, tellings.iter().map(|t| t.claim))?;
        let draft = view.chain.first().copied();
        let mut written = Written::default();
        for t in tellings {
            if t.from == t.to {
                return Err(Error::InvalidInput(format!(
                    "holder {} cannot tell claim {} to itself (nothing was written)",
                    t.from, t.claim
                )));
            }
            if view.holding(&tx, t.from, t.claim)?.is_none() {
                return Err(Error::InvalidInput(format!(
                    "holder {} does not hold claim {}, so it cannot tell it (nothing was written)",
                    t.from, t.claim
                )));
            }
            if view.holding(&tx, t.to, t.claim)?.is_some() {
                written.already_held += 1;
                continue;
            }
            let row = Row {
                holder: t.to,
                claim: t.claim,
                since: t.at.unwrap_or(now),
                how: How::Told,
                teller: Some(t.from),
                strength: 1.0,
                session: String::new(),
                axes: None,
            };
            put(&tx, draft, &row, "{}")?;
            written.made += 1;
        }
        tx.commit()?;
        Ok(written)
    }

    /// Every holder in `holders` comes to hold every claim in `claims` by witnessing it, in one
    /// transaction; a holder who already holds one keeps its holding as it was.
    pub fn witness(
        &self,
        view: &View,
        claims: &[ClaimId],
        holders: &[HolderId],
        at: Option<i64>,
    ) -> Result<Written> {
        check_batch(claims.len().saturating_mul(holders.len()), "witnessings")?;
        let since = at.unwrap_or_else(now_ms);
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        check_holders(&tx, holders.iter().copied())?;
        let view = write_view(&tx, view)?;
        check_claims(&tx, &view, claims.iter().copied())?;
        let draft = view.chain.first().copied();
        let mut written = Written::default();
        for &claim in claims {
            for &holder in holders {
                if view.holding(&tx, holder, claim)?.is_some() {
                    written.already_held += 1;
                    continue;
                }
                let row = Row {
                    holder,
                    claim,
                    since,
                    how: How::Witnessed,
                    teller: None,
                    strength: 1.0,
                    session: String::new(),
                    axes: None,
                };
                put(&tx, draft, &row, "{}")?;
                written.made += 1;
            }
        }
        tx.commit()?;
        Ok(written)
    }

    /// Set the strength of holdings (holder, claim, strength) in one transaction. Only the
    /// strength changes, never the text; each must be held in the view, else nothing is written.
    pub fn adjust_batch(&self, view: &View, changes: &[(HolderId, ClaimId, f64)]) -> Result<usize> {
        check_batch(changes.len(), "adjustments")?;
        for &(_, _, s) in changes {
            check_strength(s)?;
        }
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let view = write_view(&tx, view)?;
        let draft = view.chain.first().copied();
        for &(holder, claim, strength) in changes {
            let Some(row) = view.holding(&tx, holder, claim)? else {
                return Err(Error::NotFound(format!(
                    "a holding of claim {claim} by holder {holder} (nothing was adjusted)"
                )));
            };
            match draft {
                Some(_) => {
                    let axes = axes_json(&tx, &row)?;
                    put(&tx, draft, &Row { strength, ..row }, &axes)?;
                }
                None => {
                    tx.prepare_cached(
                        "UPDATE holding SET strength = ?3 WHERE holder_id = ?1 AND claim_id = ?2",
                    )?
                    .execute(params![holder, claim, strength])?;
                }
            }
        }
        tx.commit()?;
        Ok(changes.len())
    }

    /// Retract holdings (holder, claim) in one transaction: in a draft they are hidden until
    /// it is merged; on main they are removed. Each must be held in the view.
    pub fn retract_batch(&self, view: &View, holdings: &[(HolderId, ClaimId)]) -> Result<usize> {
        check_batch(holdings.len(), "retractions")?;
        let mut conn = self.conn();
        let tx = write_tx(&mut conn)?;
        let view = write_view(&tx, view)?;
        let draft = view.chain.first().copied();
        for &(holder, claim) in holdings {
            if view.holding(&tx, holder, claim)?.is_none() {
                return Err(Error::NotFound(format!(
                    "a holding of claim {claim} by holder {holder} (nothing was retracted)"
                )));
            }
            retract(&tx, draft, holder, claim)?;
        }
        tx.commit()?;
        Ok(holdings.len())
    }
}
