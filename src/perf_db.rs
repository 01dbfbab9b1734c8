//! The app's own performance database (`perf.sqlite`, apart from the user's memories): every
//! benchmark run it made or imported, and the timings of real operations (start-up, each recall,
//! each transcription) so the dashboard can chart how the app behaves in daily use.
//!
//! Not part of the harness ([`crate::bench`]) although it keeps the harness's reports: the
//! shipping app writes here on every start, search, dictation and reply.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::bench::{check_measured, parse_kept_report, parse_report, percentile, Report};
use crate::error::{Error, Result};

/// A kept run, as the run list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct RunSummary {
    pub id: i64,
    pub started_at: i64,
    pub command: String,
    pub rows: usize,
    /// `app` (run here) or `imported`.
    pub origin: String,
}

/// A kind of real operation whose time the app records (stored by its snake_case name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub enum TimingKind {
    /// Opening the app: the memory file, settings and the performance database.
    Startup,
    /// A search from the search box.
    Recall,
    /// Stop → the draft of a dictation.
    Dictation,
    /// A reply read aloud, to its first sound.
    Speak,
}

impl TimingKind {
    /// Every kind, in the order the dashboard shows them.
    pub const ALL: [TimingKind; 4] = [
        TimingKind::Startup,
        TimingKind::Recall,
        TimingKind::Dictation,
        TimingKind::Speak,
    ];

    /// The name stored in `perf.sqlite`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimingKind::Startup => "startup",
            TimingKind::Recall => "recall",
            TimingKind::Dictation => "dictation",
            TimingKind::Speak => "speak",
        }
    }
}

/// The timings of one kind of real operation, summarised, with the latest samples to chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct TimingSeries {
    pub kind: TimingKind,
    pub count: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// `(unix ms, milliseconds)`, oldest first, at most the latest 500.
    pub samples: Vec<(i64, f64)>,
}

/// The performance database.
pub struct Runs {
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS run (
        id         INTEGER PRIMARY KEY,
        started_at INTEGER NOT NULL,
        command    TEXT NOT NULL,
        origin     TEXT NOT NULL,
        report     TEXT NOT NULL   -- the Report as JSON (format umwelt-bench/1)
    );
    CREATE TABLE IF NOT EXISTS timing (
        id   INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,        -- TimingKind::as_str: startup | recall | dictation | speak
        at   INTEGER NOT NULL,
        ms   REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS timing_by_kind ON timing(kind, at);
";

impl Runs {
    pub fn open(path: &Path) -> Result<Runs> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                crate::paths::private_dir(dir)?;
            }
        }
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Runs {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keep `report`: refused (nothing kept) if a row has no samples.
    fn insert(&self, report: &Report, origin: &str) -> Result<RunSummary> {
        check_measured(report)?;
        let json = serde_json::to_string(report).expect("a report serialises");
        let conn = self.conn();
        conn.execute(
            "INSERT INTO run(started_at, command, origin, report) VALUES (?1, ?2, ?3, ?4)",
            params![report.started_at, report.command, origin, json],
        )?;
        Ok(RunSummary {
            id: conn.last_insert_rowid(),
            started_at: report.started_at,
            command: report.command.clone(),
            rows: report.results.len(),
            origin: origin.into(),
        })
    }

    /// Keep a run made here.
    pub fn save(&self, report: &Report) -> Result<RunSummary> {
        self.insert(report, "app")
    }

    /// Keep a run from a JSON file (`umwelt-cli bench --json`). A truncated or foreign file, or
    /// one with a row never measured (null timings), is refused with a clear message and changes
    /// nothing.
    pub fn import(&self, json: &str) -> Result<RunSummary> {
        let report = parse_report(json)?;
        self.insert(&report, "imported")
    }

    /// How many runs are kept.
    pub fn count(&self) -> Result<usize> {
        let n: i64 = self
            .conn()
            .query_row("SELECT count(*) FROM run", [], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Every kept run, newest first.
    pub fn list(&self) -> Result<Vec<RunSummary>> {
        let conn = self.conn();
        let mut st = conn.prepare("SELECT id, started_at, command, origin, report FROM run ORDER BY started_at DESC, id DESC")?;
        let rows = st.query_map([], |r| {
            let report: String = r.get(4)?;
            let rows = parse_kept_report(&report)
                .map(|x| x.results.len())
                .unwrap_or(0);
            Ok(RunSummary {
                id: r.get(0)?,
                started_at: r.get(1)?,
                command: r.get(2)?,
                origin: r.get(3)?,
                rows,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One run in full. Rows an older version kept without samples are left out; a run with no
    /// measured row is an error that says to delete it.
    pub fn get(&self, id: i64) -> Result<Report> {
        let json: Option<String> = self
            .conn()
            .query_row("SELECT report FROM run WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        let json = json.ok_or_else(|| Error::NotFound(format!("benchmark run {id}")))?;
        parse_kept_report(&json)
    }

    /// Forget a run.
    pub fn delete(&self, id: i64) -> Result<()> {
        if self.conn().execute("DELETE FROM run WHERE id = ?1", [id])? == 0 {
            return Err(Error::NotFound(format!("benchmark run {id}")));
        }
        Ok(())
    }

    /// Record how long one real operation took.
    pub fn record(&self, kind: TimingKind, at: i64, ms: f64) -> Result<()> {
        self.conn()
            .prepare_cached("INSERT INTO timing(kind, at, ms) VALUES (?1, ?2, ?3)")?
            .execute(params![kind.as_str(), at, ms])?;
        Ok(())
    }

    /// The timings of `kind`: percentiles over all of them, and the latest 500 to chart.
    pub fn timings(&self, kind: TimingKind) -> Result<TimingSeries> {
        let conn = self.conn();
        let mut all: Vec<f64> = conn
            .prepare_cached("SELECT ms FROM timing WHERE kind = ?1")?
            .query_map([kind.as_str()], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut samples: Vec<(i64, f64)> = conn
            .prepare_cached(
                "SELECT at, ms FROM timing WHERE kind = ?1 ORDER BY at DESC, id DESC LIMIT 500",
            )?
            .query_map([kind.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        samples.reverse();
        all.sort_by(f64::total_cmp);
        Ok(TimingSeries {
            kind,
            count: all.len(),
            p50_ms: percentile(&all, 50.0),
            p95_ms: percentile(&all, 95.0),
            p99_ms: percentile(&all, 99.0),
            samples,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{summarise, Machine, REPORT_FORMAT};

    fn report(p50: f64) -> Report {
        Report {
            format: REPORT_FORMAT.into(),
            started_at: 1000 + p50 as i64,
            machine: Machine::current(),
            command: "umwelt-cli bench --fast".into(),
            results: vec![summarise(
                "recall",
                1000,
                "on",
                vec![p50, p50 * 1.1],
                Some(0.3),
            )],
        }
    }

    #[test]
    fn runs_are_kept_listed_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        let a = runs.save(&report(1.0)).unwrap();
        let b = runs.save(&report(2.0)).unwrap();
        let list = runs.list().unwrap();
        assert_eq!(
            list.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![b.id, a.id]
        );
        assert_eq!(runs.get(a.id).unwrap(), report(1.0));
        runs.delete(a.id).unwrap();
        assert!(matches!(runs.get(a.id), Err(Error::NotFound(_))));
    }

    #[test]
    fn a_bad_import_is_refused_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        let good = serde_json::to_string(&report(1.0)).unwrap();
        for bad in [
            &good[..good.len() / 2],
            "{\"some\": \"other json\"}",
            "not json at all",
        ] {
            assert!(runs.import(bad).is_err());
        }
        assert!(runs.list().unwrap().is_empty());
        assert_eq!(runs.import(&good).unwrap().origin, "imported");
    }

    #[test]
    fn a_run_with_null_timings_is_refused_on_import_and_repaired_when_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        // What a run cancelled during warm-up used to keep: a row of NaN, saved as null.
        let mut bad = report(1.0);
        bad.results
            .push(summarise("turnlog", 0, "on", vec![], None));
        let json = serde_json::to_string(&bad).unwrap();
        assert!(json.contains("\"p50_ms\":null"), "{json}");
        let e = runs.import(&json).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.contains("never measured") && m.contains("turnlog")),
            "{e}"
        );
        assert!(
            runs.list().unwrap().is_empty(),
            "a refused import keeps nothing"
        );
        // Nor is it kept from a run made here.
        assert!(runs.save(&bad).is_err());
        assert!(runs.list().unwrap().is_empty());
        // One an older version kept opens without its unmeasured row...
        let insert = |json: &str| {
            let conn = runs.conn();
            conn.execute(
                "INSERT INTO run(started_at, command, origin, report) VALUES (1, 'x', 'app', ?1)",
                [json],
            )
            .unwrap();
            conn.last_insert_rowid()
        };
        let id = insert(&json);
        assert_eq!(runs.get(id).unwrap(), report(1.0));
        assert_eq!(runs.list().unwrap()[0].rows, 1);
        // ...and one with nothing measured says to delete it.
        let mut empty = report(1.0);
        empty.results = vec![summarise("turnlog", 0, "on", vec![], None)];
        let id = insert(&serde_json::to_string(&empty).unwrap());
        let e = runs.get(id).unwrap_err().to_string();
        assert!(e.contains("no measurement") && e.contains("Delete"), "{e}");
        runs.delete(id).unwrap();
    }

    #[test]
    fn real_timings_are_summarised_by_percentile() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
        for i in 1..=100 {
            runs.record(TimingKind::Recall, i, i as f64).unwrap();
        }
        runs.record(TimingKind::Startup, 5, 42.0).unwrap();
        let t = runs.timings(TimingKind::Recall).unwrap();
        assert_eq!(
            (t.count, t.p50_ms, t.p95_ms, t.p99_ms),
            (100, 50.0, 95.0, 99.0)
        );
        assert_eq!(t.samples.first(), Some(&(1, 1.0)));
        assert_eq!(runs.timings(TimingKind::Startup).unwrap().count, 1);
        assert_eq!(runs.timings(TimingKind::Speak).unwrap().count, 0);
    }
}
