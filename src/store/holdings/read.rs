//! Reads: does a holder hold a claim, who holds a claim, and the holdings of a holder or about
//! an entity a page at a time (newest first, with a cursor), each through a [`View`].

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::view::{main_row, resolve, Resolved, Row, DRAFT_COLS, MAIN_COLS};
use super::write::check_claims;
use super::{ClaimId, HolderId, Holding, How, Kind, View};
use crate::error::{Error, Result};
use crate::store::Store;

/// A page of holdings, as the seed reads them.
pub const PAGE: usize = 50;
/// The largest page a read returns.
const MAX_LIMIT: usize = 1_000;

/// Whose holdings to list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Listing {
    /// What one holder holds.
    Holder(HolderId),
    /// Every holding of a claim about the entity of that name.
    About(String),
}

/// One page, newest first, and the cursor of the next (if the page was full).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct HoldingsPage {
    pub holdings: Vec<Holding>,
    pub next: Option<String>,
}

/// One holder of a claim, as `who_holds` returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct HeldBy {
    pub holder: String,
    pub how: How,
    pub from: Option<String>,
    pub since: i64,
    pub strength: f64,
}

/// The order of a listing: newest first, then by holder and claim, all descending.
type Key = (i64, HolderId, ClaimId);

fn key(r: &Row) -> Key {
    (r.since, r.holder, r.claim)
}

/// FNV-1a: a cursor names the listing and view it belongs to.
fn fingerprint(listing: &Listing, view: &View) -> u64 {
    let s = format!("{listing:?}|{view:?}");
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn bad_cursor() -> Error {
    Error::InvalidInput(
        "this page cursor was not given for this listing: start again without a cursor".into(),
    )
}

fn parse_cursor(c: &str, fp: u64) -> Result<Key> {
    let parts: Vec<&str> = c.split('.').collect();
    let [f, since, holder, claim] = parts[..] else {
        return Err(bad_cursor());
    };
    if u64::from_str_radix(f, 16).ok() != Some(fp) {
        return Err(bad_cursor());
    }
    let n = |s: &str| s.parse::<i64>().map_err(|_| bad_cursor());
    Ok((n(since)?, n(holder)?, n(claim)?))
}

/// Holder names, read once per call.
struct Names<'a> {
    conn: &'a Connection,
    known: HashMap<HolderId, String>,
}

impl Names<'_> {
    fn of(&mut self, id: HolderId) -> Result<String> {
        if let Some(n) = self.known.get(&id) {
            return Ok(n.clone());
        }
        let n: String = self
            .conn
            .prepare_cached("SELECT name FROM holder WHERE id = ?1")?
            .query_row([id], |r| r.get(0))?;
        self.known.insert(id, n.clone());
        Ok(n)
    }
}

/// A stored row with its claim's text, kind and entities, and names for ids.
fn full(conn: &Connection, names: &mut Names, r: Row) -> Result<Holding> {
    let (text, kind): (String, String) = conn
        .prepare_cached("SELECT text, kind FROM claim WHERE id = ?1")?
        .query_row([r.claim], |x| Ok((x.get(0)?, x.get(1)?)))?;
    let about = conn
        .prepare_cached(
            "SELECT e.name FROM claim_about a JOIN entity e ON e.id = a.entity_id WHERE a.claim_id = ?1 ORDER BY e.name",
        )?
        .query_map([r.claim], |x| x.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(Holding {
        holder: names.of(r.holder)?,
        holder_id: r.holder,
        claim: r.claim,
        text,
        kind: Kind::parse(&kind).unwrap_or_default(),
        about,
        how: r.how,
        from: r.teller.map(|t| names.of(t)).transpose()?,
        since: r.since,
        strength: r.strength,
    })
}

fn check_holder(conn: &Connection, id: HolderId) -> Result<()> {
    if !conn
        .prepare_cached("SELECT 1 FROM holder WHERE id = ?1")?
        .exists([id])?
    {
        return Err(Error::NotFound(format!("holder {id}")));
    }
    Ok(())
}

fn entity_id(conn: &Connection, name: &str) -> Result<i64> {
    conn.prepare_cached("SELECT id FROM entity WHERE name = ?1")?
        .query_row([name.trim()], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::NotFound(format!("the entity '{name}'")))
}

impl Store {
    /// Whether `holder` holds `claim` in the view. An unknown holder or claim is an error.
    pub fn holds(&self, view: &View, holder: HolderId, claim: ClaimId) -> Result<bool> {
        let conn = self.conn();
        let v = resolve(&conn, view)?;
        check_holder(&conn, holder)?;
        check_claims(&conn, &v, [claim])?;
        Ok(v.holding(&conn, holder, claim)?.is_some())
    }

    /// Everyone who holds `claim` in the view, earliest first, with how and from whom.
    pub fn who_holds(&self, view: &View, claim: ClaimId) -> Result<Vec<HeldBy>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let v = resolve(&tx, view)?;
        check_claims(&tx, &v, [claim])?;
        let mut rows: HashMap<HolderId, Row> = tx
            .prepare_cached(&format!(
                "SELECT {MAIN_COLS} FROM holding WHERE claim_id = ?1"
            ))?
            .query_map([claim], main_row)?
            .map(|r| r.map(|r| (r.holder, r)))
            .collect::<rusqlite::Result<_>>()?;
        let overlay = v.overlay(
            &tx,
            &format!(
                "SELECT {DRAFT_COLS} FROM draft_holding WHERE draft_id = ?1 AND claim_id = ?2"
            ),
            claim,
        )?;
        for ((holder, _), row) in overlay {
            match row {
                Some(r) => rows.insert(holder, r),
                None => rows.remove(&holder),
            };
        }
        let mut rows: Vec<Row> = rows.into_values().collect();
        rows.sort_by_key(|r| (r.since, r.holder));
        let mut names = Names {
            conn: &tx,
            known: HashMap::new(),
        };
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            if !v.on_axis(&tx, &r)? {
                continue;
            }
            out.push(HeldBy {
                holder: names.of(r.holder)?,
                how: r.how,
                from: r.teller.map(|t| names.of(t)).transpose()?,
                since: r.since,
                strength: r.strength,
            });
        }
        Ok(out)
    }

    /// A page of holdings of a holder or about an entity, in the view, newest first. `cursor`
    /// is the `next` of the page before; one from another listing or view is refused.
    pub fn holdings(
        &self,
        listing: &Listing,
        view: &View,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<HoldingsPage> {
        if limit == 0 || limit > MAX_LIMIT {
            return Err(Error::InvalidInput(format!(
                "a page holds 1 to {MAX_LIMIT} holdings, not {limit}"
            )));
        }
        let fp = fingerprint(listing, view);
        let after = match cursor {
            Some(c) => parse_cursor(c, fp)?,
            None => (i64::MAX, i64::MAX, i64::MAX),
        };
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let v = resolve(&tx, view)?;
        let (arg, overlay_sql, main_sql) = match listing {
            Listing::Holder(h) => {
                check_holder(&tx, *h)?;
                (
                    *h,
                    format!("SELECT {DRAFT_COLS} FROM draft_holding WHERE draft_id = ?1 AND holder_id = ?2"),
                    format!(
                        "SELECT {MAIN_COLS} FROM holding WHERE holder_id = ?1 AND (since, claim_id) < (?2, ?4)
                         ORDER BY since DESC, claim_id DESC LIMIT ?5"
                    ),
                )
            }
            Listing::About(name) => {
                let e = entity_id(&tx, name)?;
                let cols = "h.holder_id, h.claim_id, h.since, h.provenance, h.teller, h.strength, h.session";
                let main = if crate::optimisations::enabled() {
                    // The index the triggers keep: one range, already in order.
                    format!(
                        "SELECT {cols} FROM holding_about a JOIN holding h ON h.holder_id = a.holder_id AND h.claim_id = a.claim_id
                         WHERE a.entity_id = ?1 AND (a.since, a.holder_id, a.claim_id) < (?2, ?3, ?4)
                         ORDER BY a.since DESC, a.holder_id DESC, a.claim_id DESC LIMIT ?5"
                    )
                } else {
                    format!(
                        "SELECT {cols} FROM claim_about c JOIN holding h ON h.claim_id = c.claim_id
                         WHERE c.entity_id = ?1 AND (h.since, h.holder_id, h.claim_id) < (?2, ?3, ?4)
                         ORDER BY h.since DESC, h.holder_id DESC, h.claim_id DESC LIMIT ?5"
                    )
                };
                (
                    e,
                    "SELECT d.holder_id, d.claim_id, d.since, d.provenance, d.teller, d.strength, d.session, d.axes, d.retracted
                     FROM draft_holding d JOIN claim_about a ON a.claim_id = d.claim_id
                     WHERE d.draft_id = ?1 AND a.entity_id = ?2"
                        .to_string(),
                    main,
                )
            }
        };
        let overlay = v.overlay(&tx, &overlay_sql, arg)?;
        let mut mine: Vec<Row> = overlay
            .values()
            .flatten()
            .filter(|r| key(r) < after)
            .cloned()
            .collect();
        mine.sort_by_key(|r| std::cmp::Reverse(key(r)));
        let mut mine = mine.into_iter().peekable();
        let fetch = limit + overlay.len() + 1;
        let mut main = tx.prepare_cached(&main_sql)?;
        let mut from = after;
        let mut page: Vec<Row> = Vec::with_capacity(limit);
        'pages: loop {
            let batch: Vec<Row> = main
                .query_map(params![arg, from.0, from.1, from.2, fetch as i64], main_row)?
                .collect::<rusqlite::Result<_>>()?;
            let exhausted = batch.len() < fetch;
            let floor = batch.last().map(key);
            let mut batch = batch
                .into_iter()
                .filter(|r| !overlay.contains_key(&(r.holder, r.claim)))
                .peekable();
            loop {
                // The newer of the next main row and the next draft row; draft rows older than
                // the last main row read wait for the next batch (unless main has no more).
                let take_mine = match (batch.peek(), mine.peek()) {
                    (Some(b), Some(m)) => key(m) > key(b),
                    (None, Some(m)) => exhausted || floor.is_none_or(|f| key(m) > f),
                    (Some(_), None) => false,
                    (None, None) => break,
                };
                let row = if take_mine { mine.next() } else { batch.next() };
                let Some(row) = row else { break };
                if v.on_axis(&tx, &row)? {
                    page.push(row);
                    if page.len() == limit {
                        break 'pages;
                    }
                }
            }
            match (exhausted, floor) {
                (false, Some(f)) => from = f,
                _ => break,
            }
        }
        let next = (page.len() == limit).then(|| {
            let (s, h, c) = key(page.last().expect("a full page"));
            format!("{fp:016x}.{s}.{h}.{c}")
        });
        let mut names = Names {
            conn: &tx,
            known: HashMap::new(),
        };
        let holdings = page
            .into_iter()
            .map(|r| full(&tx, &mut names, r))
            .collect::<Result<_>>()?;
        Ok(HoldingsPage { holdings, next })
    }

    /// A resolved view, for the other parts of this module that read outside a page.
    pub(super) fn resolved(&self, conn: &Connection, view: &View) -> Result<Resolved> {
        resolve(conn, view)
    }
}
