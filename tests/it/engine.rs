//! The assistant-memory engine of the first seed, on random vectors (no model needed):
//! recall with and without a session reaches the index, forget, re-embed, history, turn log,
//! and the same answers with every optimisation off.

use std::sync::atomic::AtomicBool;

use umwelt::bench::{Corpus, Rng};
use umwelt::clock::now_ms;
use umwelt::optimisations;
use umwelt::store::journal::{Stage, Turn};
use umwelt::store::{NewMemory, ReembedProgress};
use umwelt::Store;

use crate::common;

fn corpus(size: usize) -> (tempfile::TempDir, Corpus) {
    let dir = tempfile::tempdir().unwrap();
    let c = Corpus::build(&dir.path().join("c.sqlite"), size).unwrap();
    (dir, c)
}

#[test]
fn both_recall_paths_reach_the_index_and_agree_with_the_plain_path() {
    let _g = common::exclusive();
    let (_d, c) = corpus(3000);
    let store = Store::open(&c.path).unwrap();
    let mut rng = Rng::new(5);
    for i in 0..20 {
        let q = rng.vector();
        let session = format!("session-{}", i % 50);
        for s in [None, Some(session.as_str())] {
            optimisations::set_enabled(Some(true));
            let before = store.recall_stats();
            let fast: Vec<i64> = store
                .recall_vector(&q, "bench", s, 10, c.now)
                .unwrap()
                .iter()
                .map(|h| h.memory.id)
                .collect();
            assert_eq!(
                store.recall_stats().indexed,
                before.indexed + 1,
                "recall with session {s:?} must use the index"
            );
            optimisations::set_enabled(Some(false));
            let plain: Vec<i64> = store
                .recall_vector(&q, "bench", s, 10, c.now)
                .unwrap()
                .iter()
                .map(|h| h.memory.id)
                .collect();
            assert_eq!(store.recall_stats().scanned, before.scanned + 1);
            assert_eq!(fast, plain, "query {i}, session {s:?}");
            assert_eq!(fast.len(), 10);
        }
    }
    optimisations::set_enabled(None);
}

#[test]
fn writes_after_the_index_is_loaded_are_found_and_deletes_are_gone() {
    let _g = common::exclusive();
    optimisations::set_enabled(Some(true));
    let (_d, c) = corpus(500);
    let store = Store::open(&c.path).unwrap();
    let mut rng = Rng::new(11);
    store
        .recall_vector(&rng.vector(), "bench", None, 5, c.now)
        .unwrap(); // loads the index
    let v = rng.vector();
    let id = store
        .remember_with_vector(
            &NewMemory {
                scope: "bench",
                session: "new",
                text: "fresh",
                ..Default::default()
            },
            &v,
        )
        .unwrap();
    assert_eq!(
        store.recall_vector(&v, "bench", None, 1, c.now).unwrap()[0]
            .memory
            .id,
        id
    );
    assert_eq!(
        store
            .recall_vector(&v, "bench", Some("new"), 5, c.now)
            .unwrap()
            .len(),
        1
    );
    store.delete(id).unwrap();
    assert!(store
        .recall_vector(&v, "bench", None, 10, c.now)
        .unwrap()
        .iter()
        .all(|h| h.memory.id != id));
    optimisations::set_enabled(None);
}

#[test]
fn another_connections_writes_reach_a_loaded_index_on_both_paths() {
    // Two stores on one file are two connections, as two processes are (tests/it/writers.rs
    // runs real ones): what one writes, the other's loaded index must see before it answers.
    let _g = common::exclusive();
    let (_d, c) = corpus(3000);
    let (a, b) = (Store::open(&c.path).unwrap(), Store::open(&c.path).unwrap());
    let mut rng = Rng::new(23);
    let ids = |q: &[f32], s: Option<&str>| -> Vec<i64> {
        a.recall_vector(q, "bench", s, 10, c.now)
            .unwrap()
            .iter()
            .map(|h| h.memory.id)
            .collect()
    };
    for on in [true, false] {
        optimisations::set_enabled(Some(on));
        let q = rng.vector();
        let top = ids(&q, None)[0]; // loads a's index (when on)
        let session = a.get(top).unwrap().session;
        b.delete(top).unwrap();
        for s in [None, Some(session.as_str())] {
            let after = ids(&q, s);
            assert!(!after.contains(&top), "on={on}, session {s:?}: {after:?}");
        }
        let v = rng.vector();
        let new = b
            .remember_with_vector(
                &NewMemory {
                    scope: "bench",
                    session: &format!("from-b-{on}"),
                    text: "written by the other connection",
                    ..Default::default()
                },
                &v,
            )
            .unwrap();
        assert_eq!(ids(&v, None)[0], new, "on={on}");
        assert_eq!(ids(&v, Some(&format!("from-b-{on}"))), [new], "on={on}");
        // A change elsewhere in the file (history) leaves the answers as they were.
        let before = ids(&q, None);
        b.append_message("bench", "chat", "user", "hello").unwrap();
        b.flush().unwrap();
        assert_eq!(ids(&q, None), before, "on={on}");
    }
    // After both rounds of changes, the refreshed index answers as the plain path does.
    for _ in 0..10 {
        let q = rng.vector();
        optimisations::set_enabled(Some(true));
        let fast = ids(&q, None);
        optimisations::set_enabled(Some(false));
        assert_eq!(fast, ids(&q, None));
    }
    optimisations::set_enabled(None);
}

#[test]
fn forget_removes_a_scope_and_touches_nothing_else() {
    let _process = common::shared();
    let (_d, c) = corpus(300);
    let store = Store::open(&c.path).unwrap();
    let mut rng = Rng::new(3);
    let other = store
        .remember_with_vector(
            &NewMemory {
                scope: "someone else",
                text: "not mine",
                ..Default::default()
            },
            &rng.vector(),
        )
        .unwrap();
    store
        .append_message("bench", "session-1", "user", "hello")
        .unwrap();
    store
        .append_message("someone else", "s", "user", "hi")
        .unwrap();
    assert_eq!(store.forget("bench").unwrap(), 300);
    assert_eq!(store.count("bench").unwrap(), 0);
    assert!(store.history("bench", "session-1", 10).unwrap().is_empty());
    assert!(store
        .recall_vector(&rng.vector(), "bench", None, 5, now_ms())
        .unwrap()
        .is_empty());
    assert_eq!(store.get(other).unwrap().text, "not mine");
    assert_eq!(store.history("someone else", "s", 10).unwrap().len(), 1);
    assert_eq!(store.forget("nobody").unwrap(), 0);
}

#[test]
fn reembed_rewrites_every_vector_in_batches_and_resumes_after_an_interruption() {
    let _process = common::shared();
    let (_d, c) = corpus(1000);
    let store = Store::open(&c.path).unwrap();
    assert_eq!(store.stale_embeddings("model-b").unwrap(), 1000);
    let target = Rng::new(99).vector();
    let embed = |texts: &[&str]| Ok(texts.iter().map(|_| target.clone()).collect());
    // Interrupt after the second batch.
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    let p = store
        .reembed_all(
            "model-b",
            100,
            &embed,
            &mut |p: ReembedProgress| {
                seen.push(p);
                if p.done >= 200 {
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .unwrap();
    assert_eq!(
        p,
        ReembedProgress {
            done: 200,
            total: 1000
        }
    );
    assert_eq!(seen.first().unwrap().done, 0);
    assert_eq!(store.stale_embeddings("model-b").unwrap(), 800);
    // Resume in a new process's worth of state: reopen the file.
    drop(store);
    let store = Store::open(&c.path).unwrap();
    let p = store
        .reembed_all("model-b", 300, &embed, &mut |_| {}, &AtomicBool::new(false))
        .unwrap();
    assert_eq!(
        p,
        ReembedProgress {
            done: 800,
            total: 800
        }
    );
    assert_eq!(store.stale_embeddings("model-b").unwrap(), 0);
    let hits = store
        .recall_vector(&target, "bench", None, 10, c.now)
        .unwrap();
    assert!(
        hits.iter().all(|h| h.similarity > 0.999),
        "every vector is the new one"
    );
}

#[test]
fn history_survives_a_clean_shutdown_and_keeps_its_order() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    {
        let store = Store::open(&path).unwrap();
        for i in 0..2000 {
            store
                .append_message(
                    "me",
                    "chat",
                    if i % 2 == 0 { "user" } else { "assistant" },
                    &format!("m{i}"),
                )
                .unwrap();
        }
        store
            .log_turn(
                "me",
                "chat",
                Turn {
                    user_text: "q".into(),
                    reply_text: "a".into(),
                    stages: vec![Stage {
                        stage: "stt".into(),
                        ms: 412.5,
                    }],
                    at: now_ms(),
                },
            )
            .unwrap();
        // Dropped right after the last acknowledged append: nothing may be lost.
    }
    let store = Store::open(&path).unwrap();
    let h = store.history("me", "chat", 5000).unwrap();
    assert_eq!(h.len(), 2000);
    assert_eq!(h[0].text, "m0");
    assert_eq!(h[1999].text, "m1999");
    assert_eq!(
        store
            .history("me", "chat", 3)
            .unwrap()
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>(),
        ["m1997", "m1998", "m1999"]
    );
    let t = store.turns("me", "chat", 10).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].stages[0].ms, 412.5);
}

#[test]
fn queued_history_is_on_disk_after_flush_even_if_the_process_exits_at_once() {
    let _process = common::shared();
    const CHILD: &str = "UMWELT_TEST_EXIT_AFTER_FLUSH";
    let queue = |store: &Store| {
        for i in 0..50 {
            store
                .append_message("me", "chat", "user", &format!("m{i}"))
                .unwrap();
        }
        let turn = Turn {
            user_text: "q".into(),
            reply_text: "a".into(),
            stages: Vec::new(),
            at: now_ms(),
        };
        store.log_turn("me", "chat", turn).unwrap();
    };
    if let Some(path) = std::env::var_os(CHILD) {
        // The child: queue, flush, and leave the way the app does (no destructor runs).
        let store = Store::open(&path).unwrap();
        queue(&store);
        store.flush().unwrap();
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    // In this process: a second Store on the same file sees what the first one flushed.
    let path = dir.path().join("h.sqlite");
    let store = Store::open(&path).unwrap();
    queue(&store);
    store.flush().unwrap();
    let other = Store::open(&path).unwrap();
    assert_eq!(other.history("me", "chat", 100).unwrap().len(), 50);
    assert_eq!(other.turns("me", "chat", 10).unwrap().len(), 1);
    // Through a real process::exit, in a child of this test binary.
    let path = dir.path().join("exit.sqlite");
    let test = "engine::queued_history_is_on_disk_after_flush_even_if_the_process_exits_at_once";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(CHILD, &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let after = Store::open(&path).unwrap();
    assert_eq!(after.history("me", "chat", 100).unwrap().len(), 50);
    assert_eq!(after.turns("me", "chat", 10).unwrap().len(), 1);
}

#[test]
fn startup_loads_no_model_and_migrates_an_older_file() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    // A file as schema version 1 left it (sqlite-vec is registered by opening any store).
    drop(Store::open(dir.path().join("any.sqlite")).unwrap());
    {
        let conn = common::raw_connection(&path);
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE holder (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
             CREATE TABLE claim (id INTEGER PRIMARY KEY, text TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'fact', created_at INTEGER NOT NULL, source TEXT NOT NULL DEFAULT 'typed', audio_path TEXT);
             CREATE TABLE holding (holder_id INTEGER NOT NULL, claim_id INTEGER NOT NULL, session TEXT NOT NULL DEFAULT '', since INTEGER NOT NULL, provenance TEXT NOT NULL DEFAULT 'authored', PRIMARY KEY (holder_id, claim_id)) WITHOUT ROWID;
             CREATE VIRTUAL TABLE claim_fts USING fts5(text, content='claim', content_rowid='id');
             CREATE VIRTUAL TABLE claim_vec USING vec0(holder_id INTEGER PARTITION KEY, session TEXT, embedding FLOAT[384] distance_metric=cosine);
             INSERT INTO holder VALUES (1, 'me', 0);
             INSERT INTO claim(id, text, created_at) VALUES (1, 'an old note', 5);
             INSERT INTO holding VALUES (1, 1, '', 5, 'authored');
             PRAGMA user_version = 1;",
        )
        .unwrap();
        let v = format!("[{}]", vec!["0.05103104"; 384].join(","));
        conn.execute("INSERT INTO claim_vec(rowid, holder_id, session, embedding) VALUES (1, 1, '', vec_f32(?1))", [v]).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert!(!store.embedder().is_loaded());
    assert_eq!(store.list("me", 10, None).unwrap()[0].text, "an old note");
    assert_eq!(
        store.stale_embeddings("anything").unwrap(),
        1,
        "an old claim has no recorded model"
    );
    store.append_message("me", "s", "user", "works").unwrap();
    store
        .remember_with_vector(
            &NewMemory {
                scope: "me",
                text: "a new note",
                ..Default::default()
            },
            &Rng::new(1).vector(),
        )
        .unwrap();
    assert_eq!(store.count("me").unwrap(), 2);
    // The old note's vector came across: it is found.
    let q = vec![0.05103104f32; 384];
    assert_eq!(
        store.recall_vector(&q, "me", None, 1, now_ms()).unwrap()[0]
            .memory
            .text,
        "an old note"
    );
    assert_eq!(store.history("me", "s", 1).unwrap()[0].text, "works");
}
