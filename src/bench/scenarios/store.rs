//! The memory store: recall, remember, re-embed, forget, opening, history and the turn log.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::{prepared, time, timed, Ctx, Prepared, Sample, Scenario};
use crate::bench::corpus::{Rng, SCOPE, SESSIONS};
use crate::clock::now_ms;
use crate::embed::LazyEmbedder;
use crate::error::{Error, Result};
use crate::store::journal::{Stage, Turn};
use crate::store::{NewMemory, Store};

const K: usize = 10;

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "recall",
        "retrieval narrowed to one session",
        |ctx, size| recall(ctx, size, true),
    )
    .targets(&[(10_000, 0.3)])
    .sizes(&[1_000, 10_000])
    .corpus_sized()
    .both_ways(),
    Scenario::new(
        "recall_nofilter",
        "retrieval across every session: what production calls",
        |ctx, size| recall(ctx, size, false),
    )
    .targets(&[(10_000, 1.0), (100_000, 6.0)])
    .sizes(&[1_000, 10_000])
    .corpus_sized()
    .both_ways(),
    Scenario::new(
        "search",
        "the search box: words (FTS5) and meaning fused, across every session",
        search,
    )
    // Issue 15: 50 ms p95 over IPC from the window at 100 000; the engine's share of it.
    .targets(&[(100_000, 30.0)])
    .sizes(&[1_000, 10_000, 100_000])
    .corpus_sized(),
    Scenario::new(
        "index_memory",
        "memory the vector index holds, per 100 000 memories (MiB, not ms)",
        index_memory,
    )
    // Issue 17: at most 0.6 GB of resident index for 1 000 000 memories, so 57.2 MiB a 100 000.
    .targets(&[(100_000, 57.2), (1_000_000, 57.2)])
    .sizes(&[100_000])
    .iterations(1)
    .corpus_sized(),
    Scenario::new(
        "remember",
        "writing one memory and indexing it (vector given)",
        remember,
    )
    .targets(&[(10_000, 0.06)])
    .sizes(&[10_000])
    .corpus_sized(),
    Scenario::new(
        "reembed",
        "re-embedding every memory (vectors given)",
        reembed,
    )
    .targets(&[(10_000, 200.0)])
    .sizes(&[10_000])
    .iterations(5)
    .corpus_sized(),
    Scenario::new(
        "forget",
        "deleting a scope and all that hangs off it",
        forget,
    )
    .sizes(&[10_000])
    .iterations(5)
    .corpus_sized(),
    Scenario::new(
        "startup",
        "opening the store and wiring recall (model not loaded)",
        startup,
    )
    .targets(&[(0, 1.0)])
    .sizes(&[10_000])
    .corpus_sized(),
    Scenario::new(
        "history",
        "appending one message to a session of 2 000",
        history,
    )
    .targets(&[(2_000, 0.005)])
    .sizes(&[2_000])
    .both_ways(),
    Scenario::new(
        "import",
        "importing a folder of Markdown notes into a new memory file (each embedded)",
        import,
    )
    .needs_model()
    .sizes(&[10_000])
    .iterations(3)
    .corpus_sized(),
    Scenario::new("turnlog", "writing one turn down", turnlog)
        .targets(&[(0, 0.02)])
        .both_ways(),
];

/// Import `size` Markdown notes (a folder written once) into a new memory file each time: the
/// notes read, embedded (the model loaded before the clock starts) and written in one go. With
/// `UMWELT_TEST_ENCRYPTION=on` the file is encrypted: the cost of encryption on an import.
fn import(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let notes = ctx.dir.path().join(format!("import-notes-{size}"));
    if !notes.exists() {
        std::fs::create_dir_all(&notes).map_err(Error::io("making the notes folder"))?;
        let mut rng = Rng::new(11);
        for i in 0..size {
            let text = format!(
                "---\ncreated: 2026-01-01T00:00:00Z\n---\nA note about topic {} written on day {}, number {i}, with word {}.\n",
                rng.next() % 97,
                rng.next() % 365,
                rng.next() % 5000
            );
            std::fs::write(notes.join(format!("{i:06}.md")), text)
                .map_err(Error::io("writing a note to import"))?;
        }
    }
    let embedder = Arc::new(LazyEmbedder::new());
    embedder.get()?;
    let dir = ctx.dir.path().to_path_buf();
    prepared(0, move |i| {
        let path = dir.join(format!("import-{i}-{}.sqlite", now_ms()));
        let store = Store::open_with(&path, embedder.clone())?;
        let (ms, report) =
            time(|| crate::exchange::import_paths(&store, std::slice::from_ref(&notes), SCOPE))?;
        if report.imported.len() != size {
            return Err(Error::InvalidInput(format!(
                "the import kept {} of {size} notes",
                report.imported.len()
            )));
        }
        timed(ms)
    })
}

/// Top-10 recall of a random query vector, in one session (`filtered`) or across all.
fn recall(ctx: &mut Ctx, size: usize, filtered: bool) -> Result<Prepared> {
    let corpus = ctx.corpus(size)?;
    let now = corpus.now;
    let store = Store::open(&corpus.path)?;
    prepared(ctx.warmup, move |i| {
        let mut rng = Rng::new(1000 + (i % 100_000) as u64);
        let q = rng.vector();
        let session = format!("session-{}", i % SESSIONS);
        let (ms, hits) =
            time(|| store.recall_vector(&q, SCOPE, filtered.then_some(session.as_str()), K, now))?;
        Ok(Sample {
            ms,
            ids: Some(hits.iter().map(|h| h.memory.id).collect()),
        })
    })
}

/// Hybrid search on the corpus: a phrase of its words ("a note about topic 42", which every
/// memory shares three words of) and the query's vector given, as recall_nofilter is.
fn search(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let corpus = ctx.corpus(size)?;
    let now = corpus.now;
    let store = Store::open(&corpus.path)?;
    prepared(ctx.warmup, move |i| {
        let mut rng = Rng::new(1000 + (i % 100_000) as u64);
        let q = rng.vector();
        let text = format!("a note about topic {}", i % 97);
        let (ms, hits) = time(|| store.search_with_vector(&text, &q, SCOPE, None, K, now))?;
        Ok(Sample {
            ms,
            ids: Some(hits.iter().map(|h| h.memory.id).collect()),
        })
    })
}

fn remember(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let path = ctx.fresh("remember");
    ctx.corpus(size)?.copy_to(&path)?;
    let store = Store::open(&path)?;
    let mut rng = Rng::new(7);
    prepared(ctx.warmup, move |i| {
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
    })
}

fn reembed(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let path = ctx.fresh("reembed");
    ctx.corpus(size)?.copy_to(&path)?;
    let store = Store::open(&path)?;
    let mut rng = Rng::new(9);
    let pool: Vec<Vec<f32>> = (0..size.clamp(1, 4096)).map(|_| rng.vector()).collect();
    prepared(1, move |i| {
        let embed = |texts: &[&str]| {
            Ok(texts
                .iter()
                .enumerate()
                .map(|(j, _)| pool[j % pool.len()].clone())
                .collect())
        };
        let model = format!("bench-model-{i}");
        timed(
            time(|| store.reembed_all(&model, 512, &embed, &mut |_| {}, &AtomicBool::new(false)))?
                .0,
        )
    })
}

fn forget(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let corpus_path = ctx.corpus(size)?.path.clone();
    let dir = ctx.dir.path().to_path_buf();
    prepared(1, move |i| {
        let path = dir.join(format!("forget-{i}.sqlite"));
        std::fs::copy(&corpus_path, &path).map_err(Error::io("copying the bench corpus"))?;
        let store = Store::open(&path)?;
        let (ms, gone) = time(|| store.forget(SCOPE))?;
        if gone != size {
            return Err(Error::InvalidInput(format!(
                "forget removed {gone} of {size} memories"
            )));
        }
        drop(store);
        for ext in ["", "-wal", "-shm"] {
            // The temporary folder goes at the end of the run anyway.
            if let Err(e) = std::fs::remove_file(format!("{}{ext}", path.display())) {
                tracing::debug!("removing a bench file: {e}");
            }
        }
        timed(ms)
    })
}

/// The heap of the corpus's index once loaded (counted by the index, not read off the process's
/// resident set, which the scenarios before this one have grown and the allocator keeps).
fn index_memory(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let path = ctx.corpus(size)?.path.clone();
    prepared(0, move |_| {
        let store = Store::open(&path)?;
        store.preload(SCOPE)?;
        let bytes = store.index_bytes();
        if bytes == 0 {
            return Err(Error::InvalidInput(
                "the index did not load (are the optimisations off?)".into(),
            ));
        }
        timed(bytes as f64 / (1024.0 * 1024.0) * 100_000.0 / size.max(1) as f64)
    })
}

fn startup(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let path = ctx.corpus(size.max(1))?.path.clone();
    prepared(ctx.warmup, move |_| {
        let (ms, store) = time(|| Store::open_with(&path, Arc::new(LazyEmbedder::new())))?;
        if store.embedder().is_loaded() {
            return Err(Error::InvalidInput("startup loaded the model".into()));
        }
        timed(ms)
    })
}

/// A store whose session `s` holds `size` messages (history and turn log).
fn session_of(ctx: &Ctx, name: &str, size: usize) -> Result<Store> {
    let store = Store::open(ctx.fresh(name))?;
    for i in 0..size {
        store.append_message(SCOPE, "s", "user", &format!("message {i} of the session"))?;
    }
    store.flush()?;
    Ok(store)
}

fn history(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let store = session_of(ctx, "history", size)?;
    prepared(ctx.warmup, move |i| {
        let text = format!("one more message, {i}");
        timed(time(|| store.append_message(SCOPE, "s", "assistant", &text))?.0)
    })
}

fn turnlog(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let store = session_of(ctx, "turnlog", size)?;
    prepared(ctx.warmup, move |_| {
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
    })
}
