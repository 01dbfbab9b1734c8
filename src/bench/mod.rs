//! The benchmark harness: one implementation of every scenario, shared by `umwelt-cli bench`,
//! the criterion benches and the app's performance dashboard.
//!
//! Method (as in the first seed): 3 warm-up iterations are discarded, then 30 are measured (fewer
//! for scenarios that rewrite a whole store); p50, p95 and p99 are reported, never a mean alone.
//! The corpus is synthetic and seeded, and lives **on disk** in a temporary folder (never
//! `:memory:`: WAL and the page cache are part of what is measured): one scope, 50 sessions,
//! timestamps spread over 400 days. Vectors are random unit vectors, except in `embed`, where the
//! real model is the thing measured. Each retrieval scenario runs twice in the same process,
//! with the optimisations on and off, and reports how often the two agree.

pub mod corpus;
pub mod dictation;
pub mod machine;
pub mod memory_probe;
mod report;
pub mod retrieval_set;
mod scenarios;
pub mod town;

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

pub use corpus::{Corpus, Rng};
pub use machine::Machine;
pub use report::{compare, render_compare, render_markdown, render_table, Delta};
pub use scenarios::{default_suite, find, plan, suite, Prepared, Scenario, Suite, SUITES};

/// A scenario as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ScenarioView {
    pub name: String,
    pub answers: String,
    pub needs_model: bool,
    pub default_sizes: Vec<usize>,
}

/// Every scenario of the default suite, for a UI.
pub fn scenarios() -> Vec<ScenarioView> {
    default_suite()
        .scenarios()
        .map(|s| ScenarioView {
            name: s.name.into(),
            answers: s.answers.into(),
            needs_model: s.needs_model,
            default_sizes: s.default_sizes.to_vec(),
        })
        .collect()
}

/// What to run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct BenchConfig {
    /// The suite (`engine`, the default, or `town`).
    #[serde(default)]
    pub suite: Option<String>,
    /// Scenario names; empty means all (or all that need no model, with `fast`).
    pub scenarios: Vec<String>,
    /// Corpus sizes for the size-dependent scenarios, 1 to 2 000 000 ([`MAX_SIZE`]); empty means
    /// each scenario's defaults.
    pub sizes: Vec<usize>,
    /// Only what needs no model.
    pub fast: bool,
    /// Measured iterations, 1 to 10 000 ([`MAX_ITERATIONS`]); default 30, fewer for scenarios
    /// that rewrite a store.
    pub iterations: Option<usize>,
    /// Warm-up iterations, discarded: 0 to 10 000 (default 3).
    pub warmup: Option<usize>,
    /// The seed's "request p99": each town scenario reads a fresh copy of the town, out of the
    /// operating system's cache, with no warm-up (the first calls pay for reading the file).
    #[serde(default)]
    pub cold: bool,
}

/// The largest corpus a run may ask for (memories).
pub const MAX_SIZE: usize = 2_000_000;
/// The most iterations (measured, or warm-up) a run may ask for.
pub const MAX_ITERATIONS: usize = 10_000;

impl BenchConfig {
    /// Refuse sizes and iteration counts outside the limits (a size of 0 or over
    /// [`MAX_SIZE`], 0 iterations or over [`MAX_ITERATIONS`]), with a message that gives them.
    pub fn validate(&self) -> crate::Result<()> {
        if let Some(bad) = self.sizes.iter().find(|&&s| s == 0 || s > MAX_SIZE) {
            return Err(crate::Error::InvalidInput(format!(
                "a corpus size of {bad} is outside the limits: sizes are 1 to 2 000 000 memories"
            )));
        }
        if let Some(bad) = self.iterations.filter(|&i| i == 0 || i > MAX_ITERATIONS) {
            return Err(crate::Error::InvalidInput(format!(
                "{bad} iterations is outside the limits: iterations are 1 to 10 000"
            )));
        }
        if let Some(bad) = self.warmup.filter(|&w| w > MAX_ITERATIONS) {
            return Err(crate::Error::InvalidInput(format!(
                "{bad} warm-up iterations is outside the limits: warm-up iterations are 0 to 10 000"
            )));
        }
        Ok(())
    }
}

/// One row of results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Measurement {
    pub scenario: String,
    /// Corpus size (memories, texts or messages; 0 where it does not apply).
    pub size: usize,
    /// `on` (every optimisation), `off` (`UMWELT_PERF=off` paths) or `peer` (another tool,
    /// named by `peer`).
    pub mode: String,
    pub iterations: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Target for p50, where the scenario has one.
    pub target_ms: Option<f64>,
    /// For retrieval with optimisations on: share of queries whose top-10 equals exact search.
    pub agreement: Option<f64>,
    /// The peer this row measures (`numpy`, `sqlite-vec`, …: `scripts/bench-peers.sh`), on the
    /// same data shape as Umwelt's row of the same scenario and size; none for Umwelt's own.
    #[serde(default)]
    pub peer: Option<String>,
    /// For the quality scenarios: how often the right note was found.
    #[serde(default)]
    pub quality: Option<Quality>,
}

/// How well a retrieval found the note each question asks for (the committed retrieval set,
/// [`retrieval_set`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Quality {
    /// Questions asked.
    pub questions: usize,
    /// Share of questions whose note came first.
    pub recall_at_1: f64,
    /// Share of questions whose note was among the first five.
    pub recall_at_5: f64,
    /// Mean of 1 / the note's rank over the first ten (0 where it is not among them).
    pub mrr: f64,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Report {
    /// Format marker, so a foreign JSON file is told apart.
    pub format: String,
    pub started_at: i64,
    pub machine: Machine,
    /// The `umwelt-cli bench …` command that reproduces this run.
    pub command: String,
    pub results: Vec<Measurement>,
}

/// The value of [`Report::format`].
pub const REPORT_FORMAT: &str = "umwelt-bench/1";

/// Progress while a run goes on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Progress {
    pub scenario: String,
    pub size: usize,
    /// Steps done and planned (one step per scenario × size).
    pub done: usize,
    pub total: usize,
}

/// Percentile by nearest rank over sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarise samples (milliseconds) into a measurement row.
pub fn summarise(
    scenario: &str,
    size: usize,
    mode: &str,
    mut samples: Vec<f64>,
    target_ms: Option<f64>,
) -> Measurement {
    samples.sort_by(f64::total_cmp);
    Measurement {
        scenario: scenario.into(),
        size,
        mode: mode.into(),
        iterations: samples.len(),
        p50_ms: percentile(&samples, 50.0),
        p95_ms: percentile(&samples, 95.0),
        p99_ms: percentile(&samples, 99.0),
        min_ms: samples.first().copied().unwrap_or(f64::NAN),
        max_ms: samples.last().copied().unwrap_or(f64::NAN),
        target_ms,
        agreement: None,
        peer: None,
        quality: None,
    }
}

/// The command line that reproduces `config`.
pub fn command_for(config: &BenchConfig) -> String {
    let mut c = String::from("umwelt-cli bench");
    if let Some(suite) = &config.suite {
        c.push_str(&format!(" --suite {suite}"));
    }
    if config.fast {
        c.push_str(" --fast");
    }
    if !config.scenarios.is_empty() {
        c.push_str(&format!(" --scenario {}", config.scenarios.join(",")));
    }
    if !config.sizes.is_empty() {
        c.push_str(&format!(
            " --sizes {}",
            config
                .sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    if let Some(i) = config.iterations {
        c.push_str(&format!(" --iterations {i}"));
    }
    if config.cold {
        c.push_str(" --cold");
    }
    c
}

/// Run the scenarios that `config` names, of its suite (the default suite when it names none).
/// `progress` is called before each step; `cancel` is checked between iterations (warm-up ones
/// too), and a cancelled run returns what it measured so far (a step cancelled before its first
/// sample gives no row).
pub fn run(
    config: &BenchConfig,
    progress: &mut dyn FnMut(&Progress),
    cancel: &AtomicBool,
) -> crate::Result<Report> {
    let suite = match &config.suite {
        None => default_suite(),
        Some(name) => scenarios::suite(name).ok_or_else(|| {
            let names: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
            crate::Error::InvalidInput(format!(
                "there is no suite '{name}'; the suites are {}",
                names.join(", ")
            ))
        })?,
    };
    suite.run(config, progress, cancel)
}

/// Read a report from JSON, with a clear message for anything that is not one.
pub fn parse_report(json: &str) -> crate::Result<Report> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        crate::Error::InvalidInput(format!(
            "this is not a benchmark report: the JSON is malformed or cut short ({e})"
        ))
    })?;
    if value.get("format").and_then(|f| f.as_str()) != Some(REPORT_FORMAT) {
        return Err(crate::Error::InvalidInput(format!(
            "this JSON is not an Umwelt benchmark report (expected \"format\": \"{REPORT_FORMAT}\"); export one with `umwelt-cli bench --json FILE`"
        )));
    }
    if let Some(row) = unmeasured_rows(&value).first() {
        return Err(crate::Error::InvalidInput(format!(
            "this benchmark report holds a row that was never measured ({row}: no samples, its timings are null); it comes from a run cancelled before it measured anything. Run the benchmark again and export that run"
        )));
    }
    report_from_value(value)
}

/// A report from its JSON value, already known to be one.
fn report_from_value(value: serde_json::Value) -> crate::Result<Report> {
    serde_json::from_value(value).map_err(|e| {
        crate::Error::InvalidInput(format!("this benchmark report is incomplete: {e}"))
    })
}

/// The timings every row must hold as numbers (a row with no samples had NaN, saved as null).
const TIMINGS: [&str; 5] = ["p50_ms", "p95_ms", "p99_ms", "min_ms", "max_ms"];

/// The rows of a report's JSON whose timings are not all numbers, each described for the user
/// (`recall at size 1000, on`).
fn unmeasured_rows(value: &serde_json::Value) -> Vec<String> {
    let Some(rows) = value.get("results").and_then(|r| r.as_array()) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|row| {
            TIMINGS
                .iter()
                .any(|t| !row.get(t).is_some_and(|v| v.is_number()))
        })
        .map(|row| {
            let field = |k: &str| row.get(k).map(|v| v.to_string()).unwrap_or_default();
            format!(
                "{} at size {}, {}",
                field("scenario").trim_matches('"'),
                field("size"),
                field("mode").trim_matches('"')
            )
        })
        .collect()
}

/// A kept run read back: rows that were never measured (kept by an older version from a run
/// cancelled during warm-up) are left out, so the rest can be opened, exported and compared. A
/// run with no measured row at all is an error that says to delete it.
pub(crate) fn parse_kept_report(json: &str) -> crate::Result<Report> {
    let mut value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        crate::Error::InvalidInput(format!(
            "this kept benchmark run is damaged ({e}); delete it and run the benchmark again"
        ))
    })?;
    if unmeasured_rows(&value).is_empty() {
        return report_from_value(value);
    }
    if let Some(rows) = value.get_mut("results").and_then(|r| r.as_array_mut()) {
        rows.retain(|row| {
            TIMINGS
                .iter()
                .all(|t| row.get(t).is_some_and(|v| v.is_number()))
        });
        if rows.is_empty() {
            return Err(crate::Error::InvalidInput(
                "this benchmark run holds no measurement: it was cancelled before anything was measured. Delete it and run the benchmark again".into(),
            ));
        }
    }
    report_from_value(value)
}

/// Refuse to keep a report with a row that has no samples or a timing that is not a number.
pub(crate) fn check_measured(report: &Report) -> crate::Result<()> {
    if report.results.is_empty() {
        return Err(crate::Error::InvalidInput(
            "the benchmark was cancelled before anything was measured; nothing was kept".into(),
        ));
    }
    for m in &report.results {
        let numbers = [m.p50_ms, m.p95_ms, m.p99_ms, m.min_ms, m.max_ms];
        if m.iterations == 0 || numbers.iter().any(|x| !x.is_finite()) {
            return Err(crate::Error::InvalidInput(format!(
                "the row {} at size {}, {} has no samples; a run is kept only with every row measured",
                m.scenario, m.size, m.mode
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&s, 50.0), 50.0);
        assert_eq!(percentile(&s, 95.0), 95.0);
        assert_eq!(percentile(&s, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        let m = summarise("x", 0, "on", vec![5.0, 1.0, 3.0], Some(2.0));
        assert_eq!(
            (m.p50_ms, m.min_ms, m.max_ms, m.iterations),
            (3.0, 1.0, 5.0, 3)
        );
    }

    #[test]
    fn sizes_and_iterations_outside_the_limits_are_refused_with_the_limits() {
        let never = AtomicBool::new(false);
        for (config, says) in [
            (
                BenchConfig {
                    sizes: vec![1_000, 2_000_001],
                    ..Default::default()
                },
                "sizes are 1 to 2 000 000",
            ),
            (
                BenchConfig {
                    sizes: vec![0],
                    ..Default::default()
                },
                "sizes are 1 to 2 000 000",
            ),
            (
                BenchConfig {
                    iterations: Some(10_001),
                    ..Default::default()
                },
                "iterations are 1 to 10 000",
            ),
            (
                BenchConfig {
                    iterations: Some(0),
                    ..Default::default()
                },
                "iterations are 1 to 10 000",
            ),
        ] {
            // Refused before anything runs (a size this big would take hours to build).
            match run(&config, &mut |_| panic!("nothing may run"), &never) {
                Err(crate::Error::InvalidInput(m)) => assert!(m.contains(says), "{m}"),
                other => panic!("{config:?}: {other:?}"),
            }
        }
        let edge = BenchConfig {
            sizes: vec![1, MAX_SIZE],
            iterations: Some(MAX_ITERATIONS),
            ..Default::default()
        };
        edge.validate().unwrap();
    }

    #[test]
    fn foreign_or_truncated_json_is_refused_clearly() {
        assert!(parse_report("{\"format\": \"umwelt-bench/1\", \"resu")
            .unwrap_err()
            .to_string()
            .contains("malformed"));
        assert!(parse_report("{\"hello\": 1}")
            .unwrap_err()
            .to_string()
            .contains("not an Umwelt benchmark report"));
        assert!(parse_report("{\"format\": \"umwelt-bench/1\"}")
            .unwrap_err()
            .to_string()
            .contains("incomplete"));
    }
}
