//! The store with the real embedding model: found by meaning, kept across reopening, and
//! refusing bad input without writing half a memory.

use umwelt::store::{NewMemory, MAX_K};
use umwelt::{Error, Store};

use crate::common;

#[test]
fn a_paraphrased_question_recalls_the_right_note_first() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    assert!(
        !store.embedder().is_loaded(),
        "opening a store must not load a model"
    );
    let milk = store.remember("me", "s1", "remember to buy milk").unwrap();
    let dentist = store
        .remember("me", "s1", "the dentist appointment is on Tuesday at nine")
        .unwrap();
    let wifi = store
        .remember(
            "me",
            "s2",
            "the wifi password at the cabin is written on the fridge",
        )
        .unwrap();

    let cases = [
        ("what did I need from the shop?", milk),
        ("groceries", milk),
        ("when do I see the doctor about my teeth?", dentist),
        ("how do I get online at the holiday house?", wifi),
    ];
    for (question, want) in cases {
        let hits = store.recall(question, "me", None, 3).unwrap();
        assert_eq!(
            hits[0].memory.id,
            want,
            "{question:?} -> {:?}",
            hits.iter().map(|h| &h.memory.text).collect::<Vec<_>>()
        );
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
    // Narrowed to one session, only that session's notes come back.
    let s2 = store
        .recall("what did I need from the shop?", "me", Some("s2"), 3)
        .unwrap();
    assert_eq!(
        s2.iter().map(|h| h.memory.id).collect::<Vec<_>>(),
        vec![wifi]
    );
}

#[test]
fn memories_survive_closing_and_reopening_the_file() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    {
        let store = Store::open(&db).unwrap();
        for t in ["first note", "second note", "third note"] {
            store.remember("me", "", t).unwrap();
        }
    }
    let store = Store::open(&db).unwrap();
    let list = store.list("me", 10, None).unwrap();
    assert_eq!(
        list.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        vec!["third note", "second note", "first note"]
    );
    assert_eq!(
        store.recall("the second one", "me", None, 1).unwrap()[0]
            .memory
            .text,
        "second note"
    );
    // Deleting removes it from the list and from recall.
    store.delete(list[1].id).unwrap();
    assert_eq!(store.count("me").unwrap(), 2);
    assert!(store
        .recall("second note", "me", None, 5)
        .unwrap()
        .iter()
        .all(|h| h.memory.id != list[1].id));
    assert!(matches!(store.delete(list[1].id), Err(Error::NotFound(_))));
}

#[test]
fn recency_breaks_ties_between_equally_close_memories() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let day = 86_400_000;
    let now = umwelt::clock::now_ms();
    let v = store
        .embedder()
        .get()
        .unwrap()
        .embed_one("parking spot is level three")
        .unwrap();
    let old = store
        .remember_with_vector(
            &NewMemory {
                scope: "me",
                text: "parking spot is level three",
                created_at: Some(now - 200 * day),
                ..Default::default()
            },
            &v,
        )
        .unwrap();
    let new = store
        .remember_with_vector(
            &NewMemory {
                scope: "me",
                text: "parking spot is level three",
                created_at: Some(now - day),
                ..Default::default()
            },
            &v,
        )
        .unwrap();
    // The newer leads; being the same note, the older is shown as its similar note rather
    // than taking a place of its own.
    let hits = store.recall_vector(&v, "me", None, 2, now).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].memory.id, new);
    let similar: Vec<i64> = hits[0].similar.iter().map(|m| m.id).collect();
    assert_eq!(similar, vec![old]);
    assert!(hits[0].memory.created_at > hits[0].similar[0].created_at);
}

#[test]
fn bad_input_gets_a_clear_error_and_writes_nothing() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    for text in ["", "   \n\t "] {
        let e = store.remember("me", "", text).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    }
    let huge = "x".repeat(1 << 20);
    assert!(store
        .remember("me", "", &huge)
        .unwrap_err()
        .to_string()
        .contains("KiB"));
    assert_eq!(store.count("me").unwrap(), 0);

    store.remember("me", "", "a real note").unwrap();
    assert!(matches!(
        store.recall("note", "me", None, 0),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        store.recall("note", "me", None, MAX_K + 1),
        Err(Error::InvalidInput(_))
    ));
    assert!(store.recall("note", "nobody", None, 5).unwrap().is_empty());
    let punct = store.recall("?!... ;", "me", None, 5).unwrap();
    assert_eq!(punct.len(), 1);
    // Hostile strings are stored and searched as text, never as SQL.
    let id = store
        .remember(
            "me",
            "'; DROP TABLE claim; --",
            "Robert'); DROP TABLE claim;-- \u{0} \u{202e}",
        )
        .unwrap();
    assert_eq!(store.get(id).unwrap().session, "'; DROP TABLE claim; --");
    assert_eq!(store.count("me").unwrap(), 2);
}

#[test]
fn recall_reaches_the_vector_index_with_and_without_a_session() {
    let _process = common::shared();
    // The first seed's dead fast path: production passed a scope and no session, and only the
    // call with both reached the index. Count which path served each call.
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    store.remember("me", "s1", "remember to buy milk").unwrap();
    let before = store.recall_stats();
    store.recall("groceries", "me", None, 3).unwrap();
    store.recall("groceries", "me", Some("s1"), 3).unwrap();
    let after = store.recall_stats();
    let optimised = umwelt::optimisations::enabled();
    assert_eq!(
        after.indexed - before.indexed,
        if optimised { 2 } else { 0 }
    );
    assert_eq!(
        after.scanned - before.scanned,
        if optimised { 0 } else { 2 }
    );
}
