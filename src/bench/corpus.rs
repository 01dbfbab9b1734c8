//! The synthetic data the scenarios share: a seeded generator and the corpus on disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::now_ms;
use crate::embed::EMBED_DIM;
use crate::error::{Error, Result};
use crate::store::{NewMemory, Store};

/// The one scope of every corpus.
pub(crate) const SCOPE: &str = "bench";
/// Sessions in a corpus, named `session-0` to `session-49`.
pub(crate) const SESSIONS: usize = 50;
const DAY_MS: i64 = 86_400_000;
const SPREAD_DAYS: i64 = 400;

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

/// Words the generated notebook's notes are made of: a few hundred, so full-text search meets
/// posting lists like a real notebook's (common words in thousands of notes, rare ones in few).
const SUBJECTS: &[&str] = &[
    "the dentist",
    "my sister",
    "the landlord",
    "the plumber",
    "Anna",
    "the team",
    "the bank",
    "the school",
    "the garage",
    "grandma",
    "the neighbours",
    "the doctor",
    "the book club",
    "the accountant",
    "the vet",
    "the electrician",
    "Sam",
    "the gym",
    "the library",
    "the council",
];
const VERBS: &[&str] = &[
    "wants to talk about",
    "asked about",
    "will fix",
    "forgot",
    "reminded me of",
    "cancelled",
    "moved",
    "needs",
    "sent",
    "booked",
    "paid for",
    "is waiting for",
    "mentioned",
    "recommended",
    "lost",
    "found",
    "ordered",
    "returned",
    "complained about",
    "liked",
];
const OBJECTS: &[&str] = &[
    "the heating",
    "the invoice",
    "the train tickets",
    "the birthday present",
    "the tax form",
    "the broken window",
    "the car insurance",
    "the holiday in Lisbon",
    "the new laptop",
    "the kitchen tap",
    "the parking permit",
    "the blood test",
    "the piano lessons",
    "the garden fence",
    "the rent",
    "the passport",
    "the wedding",
    "the conference talk",
    "the recipe for lentil soup",
    "the running shoes",
    "the electricity bill",
    "the bike lights",
    "the spare keys",
    "the phone contract",
    "the library books",
];
const WHEN: &[&str] = &[
    "on Monday",
    "on Tuesday morning",
    "next week",
    "before Friday",
    "after lunch",
    "tomorrow",
    "at the weekend",
    "in March",
    "this evening",
    "by the end of the month",
    "at nine",
    "after the meeting",
    "before the holidays",
    "on Thursday at three",
];
const TAILS: &[&str] = &[
    "",
    " Call back if nothing happens.",
    " Write it in the calendar.",
    " Ask about the price first.",
    " Bring the receipt.",
    " It was cheaper last year.",
    " Remember the password is in the drawer.",
    " Check the email from yesterday.",
    " Don't forget to say thanks.",
    " Maybe ask Anna to come along.",
];

/// A generated notebook: `size` memories in the user's own scope (`me`), over two years, in
/// sessions and from every source, with notes made of everyday words and seeded random vectors
/// marked as made by the current model (so the app does not re-embed them). One note holds the
/// phrase "blue flower pot". For seeing and measuring the app at scale (`umwelt-cli notebook`).
pub fn build_notebook(path: &Path, size: usize, now: i64) -> Result<()> {
    let store = Store::open(path)?;
    if store.count(crate::store::DEFAULT_SCOPE)? > 0 {
        return Err(Error::InvalidInput(format!(
            "{} already holds memories; give a new file",
            path.display()
        )));
    }
    let mut rng = Rng::new(7);
    let pick =
        |rng: &mut Rng, words: &[&'static str]| words[(rng.next() % words.len() as u64) as usize];
    let sessions: Vec<String> = (0..20).map(|i| format!("project-{i}")).collect();
    let sources = ["typed", "dictated", "imported", "transcribed"];
    let span = 730 * DAY_MS;
    let needle = size / 2;
    let mut start = 0;
    while start < size {
        let end = (start + 1000).min(size);
        let mut texts = Vec::with_capacity(end - start);
        let mut meta = Vec::with_capacity(end - start);
        for i in start..end {
            let text = if i == needle {
                "Put the blue flower pot on the kitchen window sill before the frost.".to_string()
            } else {
                format!(
                    "{} {} {} {}.{}",
                    pick(&mut rng, SUBJECTS),
                    pick(&mut rng, VERBS),
                    pick(&mut rng, OBJECTS),
                    pick(&mut rng, WHEN),
                    pick(&mut rng, TAILS)
                )
            };
            texts.push(capitalise(&text));
            let session = match rng.next() % 3 {
                0 => String::new(),
                _ => sessions[(rng.next() % sessions.len() as u64) as usize].clone(),
            };
            // Newer notes are more frequent, as in a notebook in use.
            let f = (rng.next() % 1_000_000) as f64 / 1e6;
            let age = (span as f64 * f * f) as i64;
            let source = sources[(rng.next() % 4) as usize];
            meta.push((session, now - age, source, rng.vector()));
        }
        let rows: Vec<(NewMemory, &[f32])> = meta
            .iter()
            .zip(&texts)
            .map(|((session, at, source, v), text)| {
                (
                    NewMemory {
                        scope: crate::store::DEFAULT_SCOPE,
                        session,
                        text,
                        created_at: Some(*at),
                        source: Some(source),
                        ..Default::default()
                    },
                    v.as_slice(),
                )
            })
            .collect();
        store.remember_batch(&rows)?;
        start = end;
    }
    store.checkpoint()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
