//! The scenarios themselves, and the synthetic corpus they run on.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::{
    dictation, summarise, BenchConfig, Machine, Measurement, Progress, Report, ScenarioInfo,
    REPORT_FORMAT,
};
use crate::embed::{Embedder, LazyEmbedder, EMBED_DIM};
use crate::error::{Error, Result};
use crate::optimisations;
use crate::speech::Transcriber;
use crate::store::journal::{Stage, Turn};
use crate::clock::now_ms;
use crate::store::{NewMemory, Store};
use crate::voice::{self, Output, SpeakOptions, Speaker};

const SCOPE: &str = "bench";
const SESSIONS: usize = 50;
const DAY_MS: i64 = 86_400_000;
const SPREAD_DAYS: i64 = 400;
const K: usize = 10;

/// Every scenario, with its target (p50, on this project's 2-core reference machine).
pub const SCENARIOS: &[ScenarioInfo] = &[
    ScenarioInfo {
        name: "recall",
        answers: "retrieval narrowed to one session",
        needs_model: false,
        targets: &[(10_000, 0.3)],
        default_sizes: &[1_000, 10_000],
        iterations: 30,
    },
    ScenarioInfo {
        name: "recall_nofilter",
        answers: "retrieval across every session: what production calls",
        needs_model: false,
        targets: &[(10_000, 1.0), (100_000, 6.0)],
        default_sizes: &[1_000, 10_000],
        iterations: 30,
    },
    ScenarioInfo {
        name: "remember",
        answers: "writing one memory and indexing it (vector given)",
        needs_model: false,
        targets: &[(10_000, 0.06)],
        default_sizes: &[10_000],
        iterations: 30,
    },
    ScenarioInfo {
        name: "reembed",
        answers: "re-embedding every memory (vectors given)",
        needs_model: false,
        targets: &[(10_000, 200.0)],
        default_sizes: &[10_000],
        iterations: 5,
    },
    ScenarioInfo {
        name: "forget",
        answers: "deleting a scope and all that hangs off it",
        needs_model: false,
        targets: &[],
        default_sizes: &[10_000],
        iterations: 5,
    },
    ScenarioInfo {
        name: "startup",
        answers: "opening the store and wiring recall (model not loaded)",
        needs_model: false,
        targets: &[(0, 1.0)],
        default_sizes: &[10_000],
        iterations: 30,
    },
    ScenarioInfo {
        name: "history",
        answers: "appending one message to a session of 2 000",
        needs_model: false,
        targets: &[(2_000, 0.005)],
        default_sizes: &[2_000],
        iterations: 30,
    },
    ScenarioInfo {
        name: "turnlog",
        answers: "writing one turn down",
        needs_model: false,
        targets: &[(0, 0.02)],
        default_sizes: &[0],
        iterations: 30,
    },
    ScenarioInfo {
        name: "embed",
        answers: "the real model: one text, a batch of 32",
        needs_model: true,
        targets: &[(1, 6.0), (32, 170.0)],
        default_sizes: &[1, 32],
        iterations: 30,
    },
    ScenarioInfo {
        name: "stt",
        answers: "whisper tiny.en on a 5.7 s spoken sample (off: whisper's full 30 s context)",
        needs_model: true,
        targets: &[],
        default_sizes: &[0],
        iterations: 5,
    },
    ScenarioInfo {
        name: "dictation_final",
        answers:
            "from Stop (half a second after the last word of a 5 s sentence) to the final text",
        needs_model: true,
        targets: &[(0, 600.0)],
        default_sizes: &[0],
        iterations: 5,
    },
    ScenarioInfo {
        name: "dictation_final_busy",
        answers: "dictation_final while another process keeps one core busy (a user's machine is rarely idle)",
        needs_model: true,
        targets: &[(0, 600.0)],
        default_sizes: &[0],
        iterations: 5,
    },
    ScenarioInfo {
        name: "dictation_first_partial",
        answers:
            "from the first word spoken to the first text on screen, fed at the pace of speech",
        needs_model: true,
        targets: &[(0, 1500.0)],
        default_sizes: &[0],
        iterations: 5,
    },
    ScenarioInfo {
        name: "stt_wer_formant",
        answers: "word error rate (%, not ms) on the 24-utterance dictation set, espeak-ng voices",
        needs_model: true,
        targets: &[(0, 20.0)],
        default_sizes: &[0],
        iterations: 1,
    },
    ScenarioInfo {
        name: "stt_wer_neural",
        answers: "word error rate (%, not ms) on the 24-utterance dictation set, Kokoro voices",
        needs_model: true,
        targets: &[(0, 4.0)],
        default_sizes: &[0],
        iterations: 1,
    },
    ScenarioInfo {
        name: "dictation_hour_memory",
        answers: "resident memory growth (MiB, not ms) from minute 10 to 60 of an hour's dictation",
        needs_model: true,
        targets: &[(0, 8.0)],
        default_sizes: &[0],
        iterations: 1,
    },
    ScenarioInfo {
        name: "speak_first_audio",
        answers:
            "from \"speak\" to the first sample taken by a real-time output, one typical sentence",
        needs_model: true,
        targets: &[(0, 500.0)],
        default_sizes: &[0],
        iterations: 10,
    },
    ScenarioInfo {
        name: "tts_rtf",
        answers: "synthesis per second of speech, in ms (real-time factor × 1000), one sentence",
        needs_model: true,
        targets: &[(0, 500.0)],
        default_sizes: &[0],
        iterations: 10,
    },
    ScenarioInfo {
        name: "speak_planned_pause",
        answers:
            "pause the voice planned between two words to stay ahead, per four-sentence reply (ms)",
        needs_model: true,
        targets: &[],
        default_sizes: &[0],
        iterations: 3,
    },
    ScenarioInfo {
        name: "speak_underruns",
        answers: "times playback ran dry in a streamed four-sentence reply (a count, not ms)",
        needs_model: true,
        targets: &[(0, 0.0)],
        default_sizes: &[0],
        iterations: 3,
    },
];

/// Scenarios whose size is a corpus size (`--sizes` applies to them).
const CORPUS_SIZED: &[&str] = &[
    "recall",
    "recall_nofilter",
    "remember",
    "reembed",
    "forget",
    "startup",
];

const STT_SAMPLE: &[u8] = include_bytes!("../../benches/data/stt-sample.wav");

/// A small, seeded generator (xorshift64*), so every run measures the same data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    pub fn unit_f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    /// A random unit vector of [`EMBED_DIM`].
    pub fn vector(&mut self) -> Vec<f32> {
        let mut v: Vec<f32> = (0..EMBED_DIM).map(|_| self.unit_f32()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

/// A synthetic store on disk: one scope, 50 sessions, 400 days of timestamps, random vectors.
pub struct Corpus {
    pub path: PathBuf,
    pub size: usize,
    pub now: i64,
}

impl Corpus {
    /// Build a corpus of `size` memories at `path` (seeded: the same every time).
    pub fn build(path: &Path, size: usize) -> Result<Corpus> {
        Corpus::build_cancellable(path, size, &AtomicBool::new(false))
    }

    /// [`Corpus::build`], stopping (with an error) within one batch of 1 000 once `cancel` is set.
    pub fn build_cancellable(path: &Path, size: usize, cancel: &AtomicBool) -> Result<Corpus> {
        let now = now_ms();
        let store = Store::open(path)?;
        let mut rng = Rng::new(42);
        let mut batch = Vec::with_capacity(1000);
        let sessions: Vec<String> = (0..SESSIONS).map(|s| format!("session-{s}")).collect();
        for i in 0..size {
            let session = (rng.next() % SESSIONS as u64) as usize;
            let age = (rng.next() % (SPREAD_DAYS * DAY_MS) as u64) as i64;
            batch.push((i, session, now - age, rng.vector()));
            if batch.len() == 1000 || i + 1 == size {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::InvalidInput("the benchmark was cancelled".into()));
                }
                let texts: Vec<String> = batch
                    .iter()
                    .map(|(i, s, _, _)| {
                        format!("memory {i} from session {s}: a note about topic {}", i % 97)
                    })
                    .collect();
                let rows: Vec<(NewMemory, &[f32])> = batch
                    .iter()
                    .zip(&texts)
                    .map(|((_, s, at, v), t)| {
                        (
                            NewMemory {
                                scope: SCOPE,
                                session: &sessions[*s],
                                text: t,
                                created_at: Some(*at),
                                embed_model: Some("random"),
                                ..Default::default()
                            },
                            v.as_slice(),
                        )
                    })
                    .collect();
                store.remember_batch(&rows)?;
                batch.clear();
            }
        }
        store.checkpoint()?;
        Ok(Corpus {
            path: path.to_path_buf(),
            size,
            now,
        })
    }

    /// A copy of the corpus file for a scenario that changes it.
    pub fn copy_to(&self, path: &Path) -> Result<()> {
        std::fs::copy(&self.path, path).map_err(Error::io(format!(
            "copying the bench corpus to {}",
            path.display()
        )))?;
        Ok(())
    }
}

fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let t = Instant::now();
    let r = f()?;
    Ok((t.elapsed().as_secs_f64() * 1e3, r))
}

struct Ctx<'a> {
    dir: tempfile::TempDir,
    corpora: Vec<Corpus>,
    warmup: usize,
    iterations: Option<usize>,
    cancel: &'a AtomicBool,
}

impl<'a> Ctx<'a> {
    fn new(warmup: usize, iterations: Option<usize>, cancel: &'a AtomicBool) -> Result<Ctx<'a>> {
        Ok(Ctx {
            dir: tempfile::Builder::new()
                .prefix("umwelt-bench-")
                .tempdir()
                .map_err(Error::io("creating a folder for the bench corpus"))?,
            corpora: Vec::new(),
            warmup,
            iterations,
            cancel,
        })
    }

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
    fn fresh(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(format!("{name}-{}.sqlite", now_ms()));
        let _ = std::fs::remove_file(&p);
        p
    }
    fn n(&self, info: &ScenarioInfo) -> usize {
        self.iterations.unwrap_or(info.iterations).max(1)
    }
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Which scenarios and sizes a config asks for.
pub fn plan(config: &BenchConfig) -> Result<Vec<(&'static ScenarioInfo, usize)>> {
    for s in &config.scenarios {
        if !SCENARIOS.iter().any(|i| i.name == s) {
            let names: Vec<&str> = SCENARIOS.iter().map(|i| i.name).collect();
            return Err(Error::InvalidInput(format!(
                "there is no scenario '{s}'; the scenarios are {}",
                names.join(", ")
            )));
        }
    }
    let mut steps = Vec::new();
    for info in SCENARIOS {
        let named = config.scenarios.iter().any(|s| s == info.name);
        if !config.scenarios.is_empty() && !named {
            continue;
        }
        if config.fast && info.needs_model {
            continue;
        }
        let sizes: Vec<usize> = if CORPUS_SIZED.contains(&info.name) && !config.sizes.is_empty() {
            config.sizes.clone()
        } else {
            info.default_sizes.to_vec()
        };
        steps.extend(sizes.into_iter().map(|s| (info, s)));
    }
    Ok(steps)
}

pub fn run(
    config: &BenchConfig,
    progress: &mut dyn FnMut(&Progress),
    cancel: &AtomicBool,
) -> Result<Report> {
    let steps = plan(config)?;
    let mut ctx = Ctx::new(config.warmup.unwrap_or(3), config.iterations, cancel)?;
    let mut report = Report {
        format: REPORT_FORMAT.into(),
        started_at: now_ms(),
        machine: Machine::current(),
        command: super::command_for(config),
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

/// One iteration's result: milliseconds, and for retrieval the ids it returned.
pub struct Sample {
    pub ms: f64,
    pub ids: Option<Vec<i64>>,
}

/// A scenario ready to run: `step(i)` performs iteration `i` (warm-up iterations get indices
/// from `usize::MAX` down) and times only the operation under test.
pub struct Prepared {
    pub warmup: usize,
    step: Box<dyn FnMut(usize) -> Result<Sample>>,
    _dir: Option<tempfile::TempDir>,
}

impl Prepared {
    /// Prepare scenario `name` at `size` on its own corpus, with optimisations on or off (for
    /// criterion; the harness prepares through [`run`] and shares corpora between scenarios).
    pub fn new(name: &str, size: usize, optimised: bool) -> Result<Prepared> {
        let info = SCENARIOS
            .iter()
            .find(|i| i.name == name)
            .ok_or_else(|| Error::InvalidInput(format!("there is no scenario '{name}'")))?;
        let never = Box::leak(Box::new(AtomicBool::new(false)));
        let mut ctx = Ctx::new(3, None, never)?;
        optimisations::set_enabled(Some(optimised));
        let mut p = prepare(&mut ctx, info, size)?;
        p._dir = Some(ctx.dir);
        Ok(p)
    }

    /// Run iteration `i`; returns its milliseconds.
    pub fn step(&mut self, i: usize) -> Result<f64> {
        Ok((self.step)(i)?.ms)
    }
}

fn timed(ms: f64) -> Result<Sample> {
    Ok(Sample { ms, ids: None })
}

fn prepare(ctx: &mut Ctx, info: &ScenarioInfo, size: usize) -> Result<Prepared> {
    let warmup = ctx.warmup;
    let prepared = |warmup: usize, step: Box<dyn FnMut(usize) -> Result<Sample>>| {
        Ok(Prepared {
            warmup,
            step,
            _dir: None,
        })
    };
    match info.name {
        "recall" | "recall_nofilter" => {
            let corpus = ctx.corpus(size)?;
            let now = corpus.now;
            let store = Store::open(&corpus.path)?;
            let filtered = info.name == "recall";
            prepared(
                warmup,
                Box::new(move |i| {
                    let mut rng = Rng::new(1000 + (i % 100_000) as u64);
                    let q = rng.vector();
                    let session = format!("session-{}", i % SESSIONS);
                    let (ms, hits) = time(|| {
                        store.recall_vector(&q, SCOPE, filtered.then_some(session.as_str()), K, now)
                    })?;
                    Ok(Sample {
                        ms,
                        ids: Some(hits.iter().map(|h| h.memory.id).collect()),
                    })
                }),
            )
        }
        "remember" => {
            let path = ctx.fresh("remember");
            ctx.corpus(size)?.copy_to(&path)?;
            let store = Store::open(&path)?;
            let mut rng = Rng::new(7);
            prepared(
                warmup,
                Box::new(move |i| {
                    let v = rng.vector();
                    let text = format!("a new memory, number {i}");
                    let session = format!("session-{}", i % SESSIONS);
                    let m = NewMemory {
                        scope: SCOPE,
                        session: &session,
                        text: &text,
                        embed_model: Some("random"),
                        ..Default::default()
                    };
                    timed(time(|| store.remember_with_vector(&m, &v))?.0)
                }),
            )
        }
        "reembed" => {
            let path = ctx.fresh("reembed");
            ctx.corpus(size)?.copy_to(&path)?;
            let store = Store::open(&path)?;
            let mut rng = Rng::new(9);
            let pool: Vec<Vec<f32>> = (0..size.clamp(1, 4096)).map(|_| rng.vector()).collect();
            prepared(
                1,
                Box::new(move |i| {
                    let embed = |texts: &[&str]| {
                        Ok(texts
                            .iter()
                            .enumerate()
                            .map(|(j, _)| pool[j % pool.len()].clone())
                            .collect())
                    };
                    let model = format!("bench-model-{i}");
                    timed(
                        time(|| {
                            store.reembed_all(
                                &model,
                                512,
                                &embed,
                                &mut |_| {},
                                &AtomicBool::new(false),
                            )
                        })?
                        .0,
                    )
                }),
            )
        }
        "forget" => {
            let corpus_path = ctx.corpus(size)?.path.clone();
            let dir = ctx.dir.path().to_path_buf();
            prepared(
                1,
                Box::new(move |i| {
                    let path = dir.join(format!("forget-{i}.sqlite"));
                    std::fs::copy(&corpus_path, &path)
                        .map_err(Error::io("copying the bench corpus"))?;
                    let store = Store::open(&path)?;
                    let (ms, gone) = time(|| store.forget(SCOPE))?;
                    if gone != size {
                        return Err(Error::InvalidInput(format!(
                            "forget removed {gone} of {size} memories"
                        )));
                    }
                    drop(store);
                    for ext in ["", "-wal", "-shm"] {
                        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
                    }
                    timed(ms)
                }),
            )
        }
        "startup" => {
            let path = ctx.corpus(size.max(1))?.path.clone();
            prepared(
                warmup,
                Box::new(move |_| {
                    let (ms, store) =
                        time(|| Store::open_with(&path, Arc::new(LazyEmbedder::new())))?;
                    if store.embedder().is_loaded() {
                        return Err(Error::InvalidInput("startup loaded the model".into()));
                    }
                    timed(ms)
                }),
            )
        }
        "history" | "turnlog" => {
            let store = Store::open(ctx.fresh(info.name))?;
            for i in 0..size {
                store.append_message(SCOPE, "s", "user", &format!("message {i} of the session"))?;
            }
            store.flush()?;
            let history = info.name == "history";
            prepared(
                warmup,
                Box::new(move |i| {
                    if history {
                        let text = format!("one more message, {i}");
                        timed(time(|| store.append_message(SCOPE, "s", "assistant", &text))?.0)
                    } else {
                        let turn = Turn {
                            user_text: "what did I need from the shop?".into(),
                            reply_text: "You wanted to buy milk.".into(),
                            stages: vec![Stage {
                                stage: "recall".into(),
                                ms: 0.4,
                            }],
                            at: now_ms(),
                        };
                        timed(time(|| store.log_turn(SCOPE, "s", turn))?.0)
                    }
                }),
            )
        }
        "embed" => {
            let e = Embedder::load()?;
            let texts: Vec<&'static str> = (0..size)
                .map(|i| EMBED_TEXTS[i % EMBED_TEXTS.len()])
                .collect();
            prepared(
                warmup,
                Box::new(move |_| timed(time(|| e.embed(&texts))?.0)),
            )
        }
        "stt" => {
            let t = Transcriber::load()?;
            let wav = ctx.dir.path().join("stt-sample.wav");
            std::fs::write(&wav, STT_SAMPLE).map_err(Error::io("writing the stt sample"))?;
            let pcm = crate::audio::read_wav_16k_mono(&wav)?;
            prepared(1, Box::new(move |_| timed(time(|| t.transcribe(&pcm))?.0)))
        }
        "dictation_final" | "dictation_final_busy" | "dictation_first_partial" => {
            let ears = crate::speech::Ears::load()?;
            let speech = dictation::neural(dictation::FIVE_SECONDS)?;
            let first = info.name == "dictation_first_partial";
            let busy = info.name == "dictation_final_busy";
            prepared(
                1,
                Box::new(move |_| {
                    let _load = busy.then(dictation::BusyCore::start).transpose()?;
                    let t = dictation::live_dictation(&ears, &speech, 0.5, 0.5)?;
                    if crate::speech::wer::word_error_rate(dictation::FIVE_SECONDS, &t.text) > 0.3 {
                        return Err(Error::Audio(format!(
                            "the sentence came back as {:?}",
                            t.text
                        )));
                    }
                    if first {
                        timed(t.first_text_ms.ok_or_else(|| {
                            Error::Audio("no text was shown while speaking".into())
                        })?)
                    } else {
                        timed(t.final_ms)
                    }
                }),
            )
        }
        "stt_wer_formant" | "stt_wer_neural" => {
            let t = Transcriber::load()?;
            let kind = if info.name == "stt_wer_formant" {
                dictation::VoiceKind::Formant
            } else {
                dictation::VoiceKind::Neural
            };
            let clips = dictation::clips(kind, None)?;
            prepared(
                0,
                Box::new(move |_| {
                    let s = dictation::score(&t, &clips, &crate::speech::Decoding::default())?;
                    timed(s.wer * 100.0)
                }),
            )
        }
        "dictation_hour_memory" => {
            let ears = crate::speech::Ears::load()?;
            let dir = ctx.dir.path().join("hour");
            prepared(
                0,
                Box::new(move |_| timed(dictation::hour_of_dictation(&ears, &dir)?)),
            )
        }
        "speak_first_audio" | "tts_rtf" | "speak_underruns" | "speak_planned_pause" => {
            let speaker = Speaker::new();
            speaker.warm_up(voice::DEFAULT_VOICE)?;
            let opts = SpeakOptions::default();
            let name = info.name;
            prepared(
                1,
                Box::new(move |_| match name {
                    "speak_first_audio" => {
                        let speech = speaker.speak(SPEAK_SENTENCE, &opts, Output::Paced)?;
                        let ms = speech.wait_first_audio(std::time::Duration::from_secs(30));
                        speech.stop();
                        speech.wait()?;
                        timed(ms.ok_or_else(|| Error::Audio("no audio came out".into()))?)
                    }
                    "tts_rtf" => {
                        let r = speaker
                            .speak(SPEAK_SENTENCE, &opts, Output::Collect)?
                            .wait()?;
                        timed(r.rtf * 1e3)
                    }
                    "speak_planned_pause" => {
                        let r = speaker.speak(SPEAK_REPLY, &opts, Output::Paced)?.wait()?;
                        timed(r.planned_pause_ms)
                    }
                    _ => {
                        let r = speaker.speak(SPEAK_REPLY, &opts, Output::Paced)?.wait()?;
                        timed(r.underruns as f64)
                    }
                }),
            )
        }
        other => Err(Error::InvalidInput(format!(
            "scenario {other} has no implementation"
        ))),
    }
}

/// Scenarios measured both with the optimisations and without.
const BOTH_WAYS: &[&str] = &[
    "stt",
    "dictation_final",
    "dictation_final_busy",
    "stt_wer_formant",
    "stt_wer_neural",
    "recall",
    "recall_nofilter",
    "history",
    "turnlog",
    "speak_first_audio",
];

/// A typical sentence read back (the voice scenarios).
const SPEAK_SENTENCE: &str =
    "You said the dentist moved your appointment to Thursday at nine, after lunch.";
/// A reply of four sentences, long enough for streaming to matter.
const SPEAK_REPLY: &str = "Here is what you told me. The dentist moved your appointment to Thursday at nine, after lunch. \
                           Bring the insurance card and the new address. Anna will pick you up at the corner afterwards.";

fn run_one(ctx: &mut Ctx, info: &ScenarioInfo, size: usize) -> Result<Vec<Measurement>> {
    let n = ctx.n(info);
    let modes: &[bool] = if BOTH_WAYS.contains(&info.name) {
        &[true, false]
    } else {
        &[true]
    };
    let mut rows = Vec::new();
    let mut ids: Vec<Vec<Vec<i64>>> = Vec::new();
    for &on in modes {
        optimisations::set_enabled(Some(on));
        let mut p = prepare(ctx, info, size)?;
        for w in 0..p.warmup {
            (p.step)(usize::MAX - w)?;
        }
        let mut samples = Vec::with_capacity(n);
        let mut got = Vec::new();
        for i in 0..n {
            if ctx.cancelled() {
                break;
            }
            let s = (p.step)(i)?;
            samples.push(s.ms);
            got.extend(s.ids);
        }
        drop(p); // flush writers while the switch still says which path they took
        ids.push(got);
        rows.push(summarise(
            info.name,
            size,
            if on { "on" } else { "off" },
            samples,
            info.target_for(size),
        ));
    }
    if ids.len() == 2 && !ids[0].is_empty() {
        let same = ids[0].iter().zip(&ids[1]).filter(|(a, b)| a == b).count();
        rows[0].agreement = Some(same as f64 / ids[0].len() as f64);
    }
    Ok(rows)
}

/// Sentences of everyday length for the embed scenario.
const EMBED_TEXTS: &[&str] = &[
    "remember to buy milk",
    "the dentist appointment moved to Tuesday at nine in the morning",
    "Anna's birthday is on the fourteenth; she wanted the blue scarf from the market",
    "the wifi password at the cabin is written on the back of the fridge door",
    "call the plumber about the dripping tap in the upstairs bathroom before the weekend",
    "parking is on level three, spot forty-two",
    "idea: a small garden with herbs on the balcony, basil, thyme and mint",
    "the project review is next Thursday; bring the numbers from the last quarter and the draft plan",
];
