//! The memory browser's reads: the list a page at a time (newest first, no memory twice or
//! missed across pages, ties on the same millisecond too), filters (session, source, dates),
//! counts, sessions, forgetting one session and nothing else, and search within a filter.

use umwelt::store::{Filter, NewMemory};
use umwelt::Store;

use crate::common;

/// A seeded unit vector: the harness's own generator.
fn vector(seed: u64) -> Vec<f32> {
    umwelt::bench::corpus::Rng::new(seed).vector()
}

const DAY: i64 = 86_400_000;
const T0: i64 = 1_780_000_000_000;

/// 500 memories: sessions a/b/"" in turn, sources typed/dictated/imported in turn, two per ms
/// for some (ties), spread over 50 days.
fn filled() -> (tempfile::TempDir, Store) {
    let (dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let sessions = ["a", "b", ""];
    let sources = ["typed", "dictated", "imported"];
    let texts: Vec<String> = (0..500)
        .map(|i| format!("note {i} about topic {}", i % 7))
        .collect();
    let rows: Vec<(NewMemory, Vec<f32>)> = (0..500)
        .map(|i| {
            (
                NewMemory {
                    scope: "me",
                    session: sessions[i % 3],
                    text: &texts[i],
                    created_at: Some(T0 + (i as i64 / 2) * (DAY / 10)),
                    source: Some(sources[i % 3]),
                    ..Default::default()
                },
                vector(i as u64),
            )
        })
        .collect();
    let refs: Vec<(NewMemory, &[f32])> = rows
        .iter()
        .map(|(m, v)| (m.clone(), v.as_slice()))
        .collect();
    store.remember_batch(&refs).unwrap();
    // Another holder's memories never show.
    store
        .remember_with_vector(
            &NewMemory {
                scope: "someone-else",
                session: "a",
                text: "not mine",
                ..Default::default()
            },
            &vector(9999),
        )
        .unwrap();
    (dir, store)
}

fn all_pages(store: &Store, filter: &Filter, size: usize) -> Vec<umwelt::Memory> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let page = store.page("me", filter, size, after).unwrap();
        assert!(page.memories.len() <= size);
        out.extend(page.memories);
        match page.next {
            Some(c) => after = Some(c),
            None => return out,
        }
    }
}

#[test]
fn pages_cover_every_memory_once_newest_first() {
    let _process = common::shared();
    let (_dir, store) = filled();
    for size in [1, 7, 60, 400, 1000] {
        let all = all_pages(&store, &Filter::all(), size);
        assert_eq!(all.len(), 500, "page size {size}");
        let mut ids: Vec<i64> = all.iter().map(|m| m.id).collect();
        assert!(
            all.windows(2)
                .all(|w| (w[0].created_at, w[0].id) > (w[1].created_at, w[1].id)),
            "newest first, ties by id"
        );
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 500, "no memory twice (page size {size})");
    }
    assert!(store.page("me", &Filter::all(), 0, None).is_err());
    assert!(store.page("me", &Filter::all(), 1001, None).is_err());
}

#[test]
fn filters_keep_what_they_say_and_counts_agree() {
    let _process = common::shared();
    let (_dir, store) = filled();
    let f =
        |session: Option<&str>, source: Option<&str>, from: Option<i64>, to: Option<i64>| Filter {
            session: session.map(String::from),
            source: source.map(String::from),
            from,
            to,
        };
    let cases = [
        f(Some("a"), None, None, None),
        f(None, Some("dictated"), None, None),
        f(Some(""), Some("imported"), None, None),
        f(None, None, Some(T0 + 10 * DAY), Some(T0 + 12 * DAY)),
        f(Some("b"), Some("dictated"), Some(T0 + 5 * DAY), None),
        f(Some("nobody"), None, None, None),
    ];
    let everything = all_pages(&store, &Filter::all(), 1000);
    for filter in &cases {
        let kept = all_pages(&store, filter, 37);
        let expected: Vec<i64> = everything
            .iter()
            .filter(|m| filter.keeps(m))
            .map(|m| m.id)
            .collect();
        assert_eq!(
            kept.iter().map(|m| m.id).collect::<Vec<_>>(),
            expected,
            "{filter:?}"
        );
        assert_eq!(
            store.count_matching("me", filter).unwrap(),
            expected.len(),
            "{filter:?}"
        );
    }
    assert!(
        store
            .page("me", &f(None, None, Some(5), Some(5)), 10, None)
            .is_err(),
        "an empty span is refused"
    );
}

#[test]
fn sessions_are_listed_and_forgetting_one_takes_only_it() {
    let _process = common::shared();
    let (_dir, store) = filled();
    store.append_message("me", "a", "user", "hello").unwrap();
    store
        .append_message("me", "chat", "user", "a session with history only")
        .unwrap();
    let sessions = store.sessions("me").unwrap();
    let names: Vec<&str> = sessions.iter().map(|s| s.name.as_str()).collect();
    for n in ["a", "b", "", "chat"] {
        assert!(names.contains(&n), "{names:?}");
    }
    let a = sessions.iter().find(|s| s.name == "a").unwrap();
    assert_eq!((a.memories, a.messages), (167, 1));
    assert_eq!(
        sessions.iter().find(|s| s.name == "chat").unwrap().memories,
        0
    );

    let gone = store.forget_session("me", "a").unwrap();
    assert_eq!(gone, 167);
    let left = all_pages(&store, &Filter::all(), 1000);
    assert_eq!(left.len(), 333);
    assert!(left.iter().all(|m| m.session != "a"));
    assert!(
        store.history("me", "a", 10).unwrap().is_empty(),
        "its history goes too"
    );
    assert_eq!(
        store.history("me", "chat", 10).unwrap().len(),
        1,
        "other sessions keep theirs"
    );
    // Recall no longer finds what was forgotten; the other holder keeps its memory.
    let hits = store
        .recall_vector(&vector(0), "me", None, 100, T0)
        .unwrap();
    assert!(hits.iter().all(|h| h.memory.session != "a"));
    assert_eq!(store.count("someone-else").unwrap(), 1);
}

#[test]
fn search_within_a_filter_finds_only_what_it_keeps() {
    let _process = common::shared();
    let (_dir, store) = filled();
    let filter = Filter {
        session: Some("b".into()),
        source: Some("dictated".into()),
        ..Filter::default()
    };
    let hits = store
        .search_in_with_vector("topic 3", &vector(7), "me", &filter, 20, T0 + 60 * DAY)
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| filter.keeps(&h.memory)), "{hits:?}");
    let dated = Filter {
        from: Some(T0 + 20 * DAY),
        to: Some(T0 + 21 * DAY),
        ..Filter::default()
    };
    let hits = store
        .search_in_with_vector("note", &vector(1), "me", &dated, 50, T0 + 60 * DAY)
        .unwrap();
    assert!(!hits.is_empty() && hits.iter().all(|h| dated.keeps(&h.memory)));
}
