//! Reading memories the way the memory browser shows them: a page at a time, newest first,
//! narrowed by a [`Filter`] (session, source, a span of time), with a [`Cursor`] to the next
//! page; how many a filter keeps (what a Forget would take); and the sessions with what each
//! holds. Every read is among one holder's memories.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::memory::{memory_row, select_memory};
use super::{Memory, Store};
use crate::error::{Error, Result};

/// The most memories one page may hold.
pub const MAX_PAGE: usize = 1000;

/// Which memories a list, a count or a search keeps. Every field left out keeps all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Filter {
    /// Only this session's.
    pub session: Option<String>,
    /// Only those of this source: `typed`, `dictated`, `imported`, `transcribed`, or one agent's
    /// (`agent: NAME`, written over MCP); `agent` keeps every agent's.
    pub source: Option<String>,
    /// Only those made at or after this time (Unix ms).
    pub from: Option<i64>,
    /// Only those made before this time (Unix ms).
    pub to: Option<i64>,
}

impl Filter {
    /// A filter that keeps everything.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// Whether `m` passes.
    pub fn keeps(&self, m: &Memory) -> bool {
        self.session.as_ref().is_none_or(|s| &m.session == s)
            && self
                .source
                .as_ref()
                .is_none_or(|s| &m.source == s || (s == "agent" && m.source.starts_with("agent: ")))
            && self.from.is_none_or(|t| m.created_at >= t)
            && self.to.is_none_or(|t| m.created_at < t)
    }

    pub(super) fn check(&self) -> Result<()> {
        if let (Some(from), Some(to)) = (self.from, self.to) {
            if from >= to {
                return Err(Error::InvalidInput(
                    "the time span ends before it starts: choose a 'from' date before the 'to' date"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn bounds(&self) -> (i64, i64) {
        (self.from.unwrap_or(i64::MIN), self.to.unwrap_or(i64::MAX))
    }
}

/// Where the next page starts: just after this memory in the list's order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Cursor {
    /// The last memory's time (Unix ms).
    pub at: i64,
    /// The last memory's id.
    pub id: i64,
}

/// One page of the list, and where the next starts (`None`: this was the last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Page {
    pub memories: Vec<Memory>,
    pub next: Option<Cursor>,
}

/// A session, and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct SessionSummary {
    /// Its name (`""` is the notebook: memories made outside any session).
    pub name: String,
    pub memories: u32,
    /// Messages in its history.
    pub messages: u32,
    /// Entries in its turn log.
    pub turns: u32,
    /// Its first and latest activity (Unix ms).
    pub first: i64,
    pub last: i64,
}

impl Store {
    /// A page of `scope`'s memories that `filter` keeps, newest first, starting after `after`.
    pub fn page(
        &self,
        scope: &str,
        filter: &Filter,
        limit: usize,
        after: Option<Cursor>,
    ) -> Result<Page> {
        filter.check()?;
        if limit == 0 || limit > MAX_PAGE {
            return Err(Error::InvalidInput(format!(
                "a page holds 1 to {MAX_PAGE} memories, not {limit}"
            )));
        }
        let (from, to) = filter.bounds();
        let (at, id) = after.map_or((i64::MAX, i64::MAX), |c| (c.at, c.id));
        let conn = self.conn();
        let mut st = conn.prepare_cached(select_memory!(
            "WHERE ho.name = ?1 AND h.since >= ?2 AND h.since < ?3
               AND (?4 IS NULL OR h.session = ?4) AND (?5 IS NULL OR c.source = ?5 OR (?5 = 'agent' AND c.source GLOB 'agent: *'))
               AND (h.since < ?6 OR (h.since = ?6 AND c.id < ?7))
             ORDER BY h.since DESC, c.id DESC LIMIT ?8"
        ))?;
        let rows = st.query_map(
            params![
                scope,
                from,
                to,
                filter.session,
                filter.source,
                at,
                id,
                limit as i64 + 1
            ],
            memory_row,
        )?;
        let mut memories = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let next = if memories.len() > limit {
            memories.truncate(limit);
            memories.last().map(|m| Cursor {
                at: m.created_at,
                id: m.id,
            })
        } else {
            None
        };
        Ok(Page { memories, next })
    }

    /// How many of `scope`'s memories `filter` keeps.
    pub fn count_matching(&self, scope: &str, filter: &Filter) -> Result<usize> {
        filter.check()?;
        let (from, to) = filter.bounds();
        let n: i64 = self.conn().prepare_cached(
            "SELECT count(*) FROM holding h JOIN holder ho ON ho.id = h.holder_id JOIN claim c ON c.id = h.claim_id
             WHERE ho.name = ?1 AND h.since >= ?2 AND h.since < ?3
               AND (?4 IS NULL OR h.session = ?4) AND (?5 IS NULL OR c.source = ?5 OR (?5 = 'agent' AND c.source GLOB 'agent: *'))",
        )?.query_row(params![scope, from, to, filter.session, filter.source], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// `scope`'s sessions, latest activity first: those with memories, history or a turn log.
    pub fn sessions(&self, scope: &str) -> Result<Vec<SessionSummary>> {
        self.flush_journal()?;
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "WITH me AS (SELECT id FROM holder WHERE name = ?1),
             parts AS (
               SELECT h.session AS s, count(*) AS m, 0 AS msg, 0 AS t, min(h.since) AS a, max(h.since) AS b
                 FROM holding h WHERE h.holder_id = (SELECT id FROM me) GROUP BY h.session
               UNION ALL
               SELECT session, 0, count(*), 0, min(at), max(at)
                 FROM message WHERE holder_id = (SELECT id FROM me) GROUP BY session
               UNION ALL
               SELECT session, 0, 0, count(*), min(at), max(at)
                 FROM turn WHERE holder_id = (SELECT id FROM me) GROUP BY session)
             SELECT s, sum(m), sum(msg), sum(t), min(a), max(b) FROM parts GROUP BY s ORDER BY max(b) DESC, s",
        )?;
        let rows = st.query_map([scope], |r| {
            Ok(SessionSummary {
                name: r.get(0)?,
                memories: r.get(1)?,
                messages: r.get(2)?,
                turns: r.get(3)?,
                first: r.get(4)?,
                last: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
