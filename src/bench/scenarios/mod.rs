//! The registry of scenarios: every suite, lookup by name, and the loop that runs them.
//!
//! A scenario is declared once, in the file of its area: its name, what it answers, its target,
//! sizes, iterations and the code that prepares it (a [`Scenario`] value). A suite is a named
//! list of such areas.
//!
//! A new suite is one new file here, say `town.rs`, holding its scenarios and its [`Suite`]
//! (`pub(super) const SUITE: Suite = Suite { name: "town", about: "…", areas: &[SCENARIOS] };`),
//! then `mod town;` and `town::SUITE` in [`SUITES`] below. Data several scenarios share lives
//! apart from them (`bench/corpus.rs`, `bench/dictation.rs`).

mod agents;
mod embed;
mod loading;
mod memory;
mod quality;
mod speech;
mod store;
mod town;
mod voice;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{
    summarise, BenchConfig, Corpus, Machine, Measurement, Progress, Report, REPORT_FORMAT,
};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::optimisations;

/// Every suite the harness knows; the first is the default.
pub const SUITES: &[Suite] = &[ENGINE, town::SUITE];

/// The app's own scenarios: memory, embedding, speech, voice and loading the models. `umwelt-cli bench`, the
/// dashboard and criterion run this one.
pub(super) const ENGINE: Suite = Suite {
    name: "engine",
    about: "the app's engine: memory, embedding, speech and voice",
    areas: &[
        store::SCENARIOS,
        quality::SCENARIOS,
        agents::SCENARIOS,
        embed::SCENARIOS,
        speech::SCENARIOS,
        voice::SCENARIOS,
        loading::SCENARIOS,
        memory::SCENARIOS,
    ],
};

/// The suite `umwelt-cli bench` and the dashboard run.
pub fn default_suite() -> &'static Suite {
    &SUITES[0]
}

/// The suite called `name`.
pub fn suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

/// The scenario called `name`, in whichever suite declares it.
pub fn find(name: &str) -> Option<&'static Scenario> {
    SUITES
        .iter()
        .flat_map(|s| s.scenarios())
        .find(|i| i.name == name)
}

/// A named group of scenarios the harness runs together.
#[derive(Debug)]
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    /// Its scenarios, area by area, in the order they run.
    pub areas: &'static [&'static [Scenario]],
}

impl Suite {
    /// Its scenarios, in the order they run.
    pub fn scenarios(&self) -> impl Iterator<Item = &'static Scenario> {
        let areas = self.areas;
        areas.iter().flat_map(|a| a.iter())
    }

    /// Which of its scenarios and sizes a config asks for.
    pub fn plan(&self, config: &BenchConfig) -> Result<Vec<(&'static Scenario, usize)>> {
        config.validate()?;
        for s in &config.scenarios {
            if !self.scenarios().any(|i| i.name == s) {
                let names: Vec<&str> = self.scenarios().map(|i| i.name).collect();
                return Err(Error::InvalidInput(format!(
                    "there is no scenario '{s}'; the scenarios are {}",
                    names.join(", ")
                )));
            }
        }
        let mut steps = Vec::new();
        for info in self.scenarios() {
            let named = config.scenarios.iter().any(|s| s == info.name);
            if !config.scenarios.is_empty() && !named {
                continue;
            }
            if config.fast && info.needs_model {
                continue;
            }
            let sizes: Vec<usize> = if info.corpus_sized && !config.sizes.is_empty() {
                config.sizes.clone()
            } else {
                info.default_sizes.to_vec()
            };
            steps.extend(sizes.into_iter().map(|s| (info, s)));
        }
        Ok(steps)
    }

    /// Run the scenarios of this suite that `config` names (see [`super::run`]).
    pub fn run(
        &self,
        config: &BenchConfig,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<Report> {
        let steps = self.plan(config)?;
        let warmup = if config.cold {
            0
        } else {
            config.warmup.unwrap_or(3)
        };
        let mut ctx = Ctx::new(warmup, config.iterations, cancel)?;
        ctx.cold = config.cold;
        let mut report = Report {
            format: REPORT_FORMAT.into(),
            started_at: now_ms(),
            machine: Machine::current(),
            command: super::command_for(&BenchConfig {
                suite: (self.name != default_suite().name).then(|| self.name.to_string()),
                ..config.clone()
            }),
            results: Vec::new(),
        };
        for (done, (info, size)) in steps.iter().enumerate() {
            if ctx.cancelled() {
                break;
            }
            progress(&Progress {
                scenario: info.name.into(),
                size: *size,
                done,
                total: steps.len(),
            });
            let rows = run_one(&mut ctx, info, *size);
            optimisations::set_enabled(None);
            match rows {
                Ok(rows) => report.results.extend(rows),
                Err(_) if ctx.cancelled() => break,
                Err(e) => return Err(e),
            }
        }
        if !ctx.cancelled() {
            progress(&Progress {
                scenario: String::new(),
                size: 0,
                done: steps.len(),
                total: steps.len(),
            });
        }
        Ok(report)
    }
}

/// One scenario: what it measures, its target, and the code that prepares it.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    pub answers: &'static str,
    pub needs_model: bool,
    /// Target p50 in milliseconds, per size where it depends on size (size 0: any).
    pub targets: &'static [(usize, f64)],
    /// Sizes to run when none are asked for.
    pub default_sizes: &'static [usize],
    pub iterations: usize,
    /// Its size is a corpus size, so `--sizes` applies to it.
    pub corpus_sized: bool,
    /// Measured both with the optimisations and without (`UMWELT_PERF=off`).
    pub both_ways: bool,
    /// Build what the scenario needs at `size` and return its timed step.
    prepare: fn(&mut Ctx, usize) -> Result<Prepared>,
}

impl Scenario {
    /// A scenario that needs no model, measured 30 times at size 0 with the optimisations on,
    /// without a target; the methods below say where it differs.
    const fn new(
        name: &'static str,
        answers: &'static str,
        prepare: fn(&mut Ctx, usize) -> Result<Prepared>,
    ) -> Scenario {
        Scenario {
            name,
            answers,
            needs_model: false,
            targets: &[],
            default_sizes: &[0],
            iterations: 30,
            corpus_sized: false,
            both_ways: false,
            prepare,
        }
    }
    const fn needs_model(mut self) -> Scenario {
        self.needs_model = true;
        self
    }
    const fn targets(mut self, targets: &'static [(usize, f64)]) -> Scenario {
        self.targets = targets;
        self
    }
    const fn sizes(mut self, sizes: &'static [usize]) -> Scenario {
        self.default_sizes = sizes;
        self
    }
    const fn iterations(mut self, iterations: usize) -> Scenario {
        self.iterations = iterations;
        self
    }
    const fn corpus_sized(mut self) -> Scenario {
        self.corpus_sized = true;
        self
    }
    const fn both_ways(mut self) -> Scenario {
        self.both_ways = true;
        self
    }

    pub fn target_for(&self, size: usize) -> Option<f64> {
        self.targets
            .iter()
            .find(|(s, _)| *s == size || *s == 0)
            .map(|t| t.1)
    }
}

/// Which scenarios and sizes of the default suite a config asks for.
pub fn plan(config: &BenchConfig) -> Result<Vec<(&'static Scenario, usize)>> {
    default_suite().plan(config)
}

/// What a scenario's preparation may use: a temporary folder, the corpora built so far (shared
/// between the scenarios of one run), and the run's settings.
struct Ctx<'a> {
    dir: tempfile::TempDir,
    corpora: Vec<Corpus>,
    /// The retrieval set built so far: its distractor count, file and targets.
    retrieval: Option<(
        usize,
        PathBuf,
        std::sync::Arc<crate::bench::retrieval_set::BuiltSet>,
    )>,
    /// Towns built so far, by days.
    towns: Vec<(usize, PathBuf)>,
    warmup: usize,
    iterations: Option<usize>,
    cancel: &'a AtomicBool,
    /// Each town scenario gets a fresh copy of the town, out of the OS's cache.
    cold: bool,
}

impl<'a> Ctx<'a> {
    fn new(warmup: usize, iterations: Option<usize>, cancel: &'a AtomicBool) -> Result<Ctx<'a>> {
        Ok(Ctx {
            dir: tempfile::Builder::new()
                .prefix("umwelt-bench-")
                .tempdir()
                .map_err(Error::io("creating a folder for the bench corpus"))?,
            corpora: Vec::new(),
            retrieval: None,
            towns: Vec::new(),
            warmup,
            iterations,
            cancel,
            cold: false,
        })
    }

    /// The corpus of `size` memories, built on first use.
    fn corpus(&mut self, size: usize) -> Result<&Corpus> {
        if let Some(i) = self.corpora.iter().position(|c| c.size == size) {
            return Ok(&self.corpora[i]);
        }
        let c = Corpus::build_cancellable(
            &self.dir.path().join(format!("corpus-{size}.sqlite")),
            size,
            self.cancel,
        )?;
        self.corpora.push(c);
        Ok(self.corpora.last().unwrap())
    }
    /// The town of `days` days (seed 42), built on first use in the run's folder. With
    /// `UMWELT_TOWN` set to a town file (`umwelt-cli town`), that file is used instead: criterion
    /// prepares each scenario on its own and would otherwise build the town each time.
    /// In a cold run, each call gives a fresh copy of that town, out of the OS's cache.
    fn town(&mut self, days: usize) -> Result<PathBuf> {
        let built = self.built_town(days)?;
        if !self.cold {
            return Ok(built);
        }
        let copy = self.dir.path().join(format!("town-{days}-cold.sqlite"));
        crate::bench::town::cold_copy(&built, &copy)?;
        Ok(copy)
    }
    fn built_town(&mut self, days: usize) -> Result<PathBuf> {
        if let Some(p) = std::env::var_os("UMWELT_TOWN") {
            return Ok(PathBuf::from(p));
        }
        if let Some((_, p)) = self.towns.iter().find(|(d, _)| *d == days) {
            return Ok(p.clone());
        }
        let p = self.dir.path().join(format!("town-{days}.sqlite"));
        crate::bench::town::build_town(&p, days, 42, &mut |_| {}, self.cancel)?;
        self.towns.push((days, p.clone()));
        Ok(p)
    }
    /// A path for a new store file in the temporary folder.
    fn fresh(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(format!("{name}-{}.sqlite", now_ms()));
        // A file of that name (from a run in the same millisecond) is replaced.
        if let Err(e) = std::fs::remove_file(&p) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("removing the old bench file {}: {e}", p.display());
            }
        }
        p
    }
    fn n(&self, info: &Scenario) -> usize {
        self.iterations.unwrap_or(info.iterations).max(1)
    }
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// One iteration's result: milliseconds, and for retrieval the ids it returned.
pub(super) struct Sample {
    pub ms: f64,
    pub ids: Option<Vec<i64>>,
}

/// A scenario ready to run: `step(i)` performs iteration `i` (warm-up iterations get indices
/// from `usize::MAX` down) and times only the operation under test.
pub struct Prepared {
    pub warmup: usize,
    step: Box<dyn FnMut(usize) -> Result<Sample>>,
    /// For a quality scenario: the id measured iteration `i` should find (its sample's `ids`
    /// are the hits, best first).
    answer: Option<Box<dyn Fn(usize) -> i64>>,
    _dir: Option<tempfile::TempDir>,
}

impl Prepared {
    /// Prepare scenario `name` at `size` on its own corpus, with optimisations on or off (for
    /// criterion; the harness prepares through [`run`] and shares corpora between scenarios).
    pub fn new(name: &str, size: usize, optimised: bool) -> Result<Prepared> {
        let info = find(name)
            .ok_or_else(|| Error::InvalidInput(format!("there is no scenario '{name}'")))?;
        let never = Box::leak(Box::new(AtomicBool::new(false)));
        let mut ctx = Ctx::new(3, None, never)?;
        optimisations::set_enabled(Some(optimised));
        let mut p = (info.prepare)(&mut ctx, size)?;
        p._dir = Some(ctx.dir);
        Ok(p)
    }

    /// Run iteration `i`; returns its milliseconds.
    pub fn step(&mut self, i: usize) -> Result<f64> {
        Ok((self.step)(i)?.ms)
    }
}

/// A prepared scenario: `warmup` iterations discarded, then `step` per measured iteration.
fn prepared(
    warmup: usize,
    step: impl FnMut(usize) -> Result<Sample> + 'static,
) -> Result<Prepared> {
    Ok(Prepared {
        warmup,
        step: Box::new(step),
        answer: None,
        _dir: None,
    })
}

impl Prepared {
    /// Score each measured iteration's hits against the id it should find.
    fn answers(mut self, answer: impl Fn(usize) -> i64 + 'static) -> Prepared {
        self.answer = Some(Box::new(answer));
        self
    }
}

/// Run `f`, returning its milliseconds and its result.
fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let t = Instant::now();
    let r = f()?;
    Ok((t.elapsed().as_secs_f64() * 1e3, r))
}

/// A sample of `ms` milliseconds (or of whatever unit the scenario reports).
fn timed(ms: f64) -> Result<Sample> {
    Ok(Sample { ms, ids: None })
}

fn run_one(ctx: &mut Ctx, info: &Scenario, size: usize) -> Result<Vec<Measurement>> {
    let n = ctx.n(info);
    let modes: &[bool] = if info.both_ways {
        &[true, false]
    } else {
        &[true]
    };
    let mut rows = Vec::new();
    let mut ids: Vec<Vec<Vec<i64>>> = Vec::new();
    // Cancel is honoured between warm-up and measured iterations alike. A mode cancelled before
    // its first measured sample gives no row (a row without samples has no percentiles), and
    // the rows measured before it are kept.
    'modes: for &on in modes {
        optimisations::set_enabled(Some(on));
        let mut p = (info.prepare)(ctx, size)?;
        for w in 0..p.warmup {
            if ctx.cancelled() {
                break 'modes;
            }
            (p.step)(usize::MAX - w)?;
        }
        let mut samples = Vec::with_capacity(n);
        let mut got = Vec::new();
        let mut ranks = Vec::new();
        for i in 0..n {
            if ctx.cancelled() {
                break;
            }
            let s = (p.step)(i)?;
            samples.push(s.ms);
            if let (Some(answer), Some(hits)) = (&p.answer, &s.ids) {
                let want = answer(i);
                ranks.push(hits.iter().position(|&id| id == want).map(|r| r + 1));
            }
            got.extend(s.ids);
        }
        drop(p); // flush writers while the switch still says which path they took
        if samples.is_empty() {
            break;
        }
        ids.push(got);
        let mut row = summarise(
            info.name,
            size,
            if on { "on" } else { "off" },
            samples,
            info.target_for(size),
        );
        if !ranks.is_empty() {
            row.quality = Some(crate::bench::retrieval_set::quality(&ranks));
        }
        rows.push(row);
    }
    if rows.is_empty() && ctx.cancelled() {
        return Err(Error::Cancelled);
    }
    if ids.len() == 2 && !ids[0].is_empty() {
        let same = ids[0].iter().zip(&ids[1]).filter(|(a, b)| a == b).count();
        rows[0].agreement = Some(same as f64 / ids[0].len() as f64);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are how the harness, criterion and kept reports find a scenario or a suite.
    #[test]
    fn scenario_and_suite_names_are_unique() {
        fn unique(mut names: Vec<&str>) -> bool {
            let all = names.len();
            names.sort_unstable();
            names.dedup();
            names.len() == all
        }
        let scenarios = SUITES.iter().flat_map(|s| s.scenarios());
        assert!(unique(scenarios.map(|i| i.name).collect()));
        assert!(unique(SUITES.iter().map(|s| s.name).collect()));
        assert_eq!(default_suite().name, "engine");
    }

    /// A quality scenario's row scores each measured iteration's hits against its answer.
    #[test]
    fn a_quality_row_counts_where_each_answer_ranked() {
        let scenario = Scenario::new("answers", "test", |ctx, _| {
            // Iteration i returns [i, 99, 98]; the answer is i for even i, 98 for odd i.
            let p = prepared(ctx.warmup, |i| {
                Ok(Sample {
                    ms: 1.0,
                    ids: Some(vec![i as i64, 99, 98]),
                })
            })?;
            Ok(p.answers(|i| if i % 2 == 0 { i as i64 } else { 98 }))
        })
        .iterations(4);
        let never = AtomicBool::new(false);
        let mut ctx = Ctx::new(1, None, &never).unwrap();
        let rows = run_one(&mut ctx, &scenario, 0).unwrap();
        let q = rows[0].quality.expect("a quality row");
        assert_eq!((q.questions, q.recall_at_1, q.recall_at_5), (4, 0.5, 1.0));
        assert!((q.mrr - (1.0 + 1.0 / 3.0) / 2.0).abs() < 1e-12);
        // A scenario without answers has no quality.
        let plain = Scenario::new("plain", "test", |ctx, _| {
            prepared(ctx.warmup, |_| timed(1.0))
        });
        assert_eq!(run_one(&mut ctx, &plain, 0).unwrap()[0].quality, None);
    }
}
