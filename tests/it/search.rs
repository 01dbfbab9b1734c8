//! Hybrid search with the real embedder: an exact phrase the user remembers finds its note first
//! among a thousand that share its words; a code that means nothing to the embedder is found by
//! its words; FTS5 syntax in a query is text; a holder's search never returns what another
//! holder holds; and near-copies take one place, the others shown as its similar notes.

use umwelt::store::NewMemory;
use umwelt::Store;

use crate::common;

const WORDS: &[&str] = &[
    "blue", "flower", "pot", "garden", "balcony", "kitchen", "paint", "water", "buy", "order",
    "call", "mum", "shop", "fence", "red", "green", "seeds", "window", "table", "market",
];

/// `n` notes made of the same few words, embedded in batches and written in one transaction.
fn fill(store: &Store, scope: &str, n: usize, seed: u64) -> Vec<String> {
    let mut h = common::hostile::Hostile::new(seed);
    let texts: Vec<String> = (0..n)
        .map(|_| {
            (0..4 + h.below(6))
                .map(|_| WORDS[h.below(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        })
        // Never the phrase itself, in that order.
        .map(|t| t.replace("blue flower pot", "blue pot flower"))
        .collect();
    let embedder = store.embedder().get().unwrap();
    for chunk in texts.chunks(64) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&refs).unwrap();
        let rows: Vec<(NewMemory, &[f32])> = chunk
            .iter()
            .zip(&vectors)
            .map(|(t, v)| {
                (
                    NewMemory {
                        scope,
                        text: t,
                        ..Default::default()
                    },
                    v.as_slice(),
                )
            })
            .collect();
        store.remember_batch(&rows).unwrap();
    }
    texts
}

#[test]
fn an_exact_phrase_finds_its_note_first_among_a_thousand_that_share_its_words() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    fill(&store, "me", 1000, 11);
    let target = store
        .remember(
            "me",
            "",
            "repot the basil into the blue flower pot by the window",
        )
        .unwrap();
    fill(&store, "me", 200, 12);
    let hits = store.search("blue flower pot", "me", None, 10).unwrap();
    assert_eq!(hits[0].memory.id, target, "{:#?}", &hits[..3]);
    assert!(hits[0].why.exact_phrase);
    assert!(hits[1..].iter().all(|h| !h.why.exact_phrase));
    // Meaning alone does not put it first: the phrase is what does.
    let recalled = store.recall("blue flower pot", "me", None, 10).unwrap();
    eprintln!(
        "recall by meaning alone ranks it {:?} of 10",
        recalled
            .iter()
            .position(|h| h.memory.id == target)
            .map(|p| p + 1)
    );
    // The scores are ordered, and each hit says where it came from.
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().all(|h| h.why.exact_phrase
        || h.why.keyword_rank.is_some()
        || h.why.meaning_rank.is_some()));
}

#[test]
fn a_code_is_found_by_its_words_and_query_syntax_is_text() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    fill(&store, "me", 100, 13);
    let part = store
        .remember("me", "", "order part XK-4471 for the dishwasher")
        .unwrap();
    let hits = store.search("XK-4471", "me", None, 5).unwrap();
    assert_eq!(hits[0].memory.id, part);
    assert!(hits[0].why.keyword_rank == Some(1));

    let long = "blue ".repeat(2_000);
    for q in [
        "\"",
        "*",
        "NEAR(",
        "NEAR(blue pot, 2)",
        "OR",
        "blue OR",
        "-",
        "-blue",
        ":",
        "text:blue",
        "\"unbalanced",
        "blue\" pot",
        "(blue",
        "^blue",
        "blue*",
        "{blue pot}",
        "AND",
        "NOT",
        "💐 blue",
        "\u{0}blue",
        long.as_str(),
    ] {
        let hits = store
            .search(q, "me", None, 5)
            .unwrap_or_else(|e| panic!("{q:?} failed: {e}"));
        assert!(hits.len() <= 5, "{q:?}");
    }
    assert_eq!(store.count("me").unwrap(), 101, "nothing changed");
    // Only the empty query and one past the size limit are refused, as bad input.
    assert!(matches!(
        store.search("   ", "me", None, 5),
        Err(umwelt::Error::InvalidInput(_))
    ));
    let huge = "a".repeat(umwelt::store::MAX_TEXT_BYTES + 1);
    assert!(matches!(
        store.search(&huge, "me", None, 5),
        Err(umwelt::Error::InvalidInput(_))
    ));
}

#[test]
fn a_holders_search_never_returns_what_another_holder_holds() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    for (i, holder) in ["ana", "ben", "cem"].iter().enumerate() {
        fill(&store, holder, 120, 20 + i as u64);
    }
    let mut h = common::hostile::Hostile::new(99);
    for i in 0..300 {
        let holder = ["ana", "ben", "cem"][h.below(3)];
        let q = (0..1 + h.below(4))
            .map(|_| WORDS[h.below(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ");
        let session = h.chance(5).then_some("");
        for hit in store.search(&q, holder, session, 1 + h.below(40)).unwrap() {
            assert_eq!(hit.memory.scope, holder, "query {i} {q:?}");
        }
    }
    assert!(store.search("blue", "nobody", None, 5).unwrap().is_empty());
}

/// Notes written with one fixed vector (the words are what is tested), `at` their times.
fn fill_plain(store: &Store, scope: &str, texts: &[String], at: i64) {
    let v = vec![1.0 / (umwelt::embed::EMBED_DIM as f32).sqrt(); umwelt::embed::EMBED_DIM];
    for (c, chunk) in texts.chunks(1000).enumerate() {
        let rows: Vec<(NewMemory, &[f32])> = chunk
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    NewMemory {
                        scope,
                        text: t,
                        created_at: Some(at + (c * 1000 + i) as i64),
                        ..Default::default()
                    },
                    v.as_slice(),
                )
            })
            .collect();
        store.remember_batch(&rows).unwrap();
    }
}

#[test]
fn a_word_in_very_many_notes_does_not_drown_the_rare_ones_and_alone_finds_the_newest() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let n = umwelt::store::COMMON_DOCS as usize + 2_000;
    let mut texts: Vec<String> = (0..n)
        .map(|i| format!("the note number {i} about the weather"))
        .collect();
    texts[7] = "the recipe for lentil soup with the red lentils".into();
    fill_plain(&store, "me", &texts, 1_700_000_000_000);
    // "the" is in every note: the rare words decide (words alone: every vector is the same).
    let hits = store
        .search_words("the lentil soup", "me", None, 5)
        .unwrap();
    assert!(hits[0].memory.text.contains("lentil"), "{:?}", hits[0]);
    assert!(hits[0].why.keyword_rank == Some(1) && hits[0].why.bm25.is_some());
    // Common words alone: the newest notes that hold them all.
    let hits = store.search_words("the weather", "me", None, 3).unwrap();
    let newest = format!("the note number {} about the weather", n - 1);
    assert_eq!(hits[0].memory.text, newest, "{hits:?}");
    assert!(hits
        .iter()
        .all(|h| h.why.bm25.is_none() && h.why.keyword_rank.is_some()));
}

#[test]
fn a_holder_finds_its_own_match_when_another_holder_has_thousands_better_ones() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let theirs: Vec<String> = (0..3_000).map(|i| format!("apple pie {i}")).collect();
    fill_plain(&store, "someone-else", &theirs, 1_700_000_000_000);
    fill_plain(
        &store,
        "me",
        &["an apple tree in the garden, planted long ago with care".to_string()],
        1_600_000_000_000,
    );
    let hits = store.search_words("apple", "me", None, 5).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].memory.text.contains("apple tree"));
    let phrase = store.search_words("apple tree", "me", None, 5).unwrap();
    assert!(phrase[0].why.exact_phrase);
}

/// Near-copies of a note (the same errand, another day) take one place with the real model: the
/// best of them is shown with the others as its similar notes, in search and in recall alike,
/// and a note on another matter keeps its own place. A note only partly alike is not folded.
#[test]
fn near_copies_take_one_place_with_the_others_as_its_similar_notes() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let copies: Vec<i64> = [
        "Drive Ben to the dentist check-up on Monday.",
        "Drive Ben to the dentist check-up on Tuesday.",
        "Drive Ben to the dentist check-up on Thursday.",
    ]
    .iter()
    .map(|t| store.remember("me", "", t).unwrap())
    .collect();
    let other = store
        .remember(
            "me",
            "",
            "The dentist said Ben needs a filling in his back tooth.",
        )
        .unwrap();
    for hits in [
        store
            .search("Ben's dentist appointment", "me", None, 5)
            .unwrap()
            .into_iter()
            .map(|h| (h.memory.id, h.similar))
            .collect::<Vec<_>>(),
        store
            .recall("Ben's dentist appointment", "me", None, 5)
            .unwrap()
            .into_iter()
            .map(|h| (h.memory.id, h.similar))
            .collect(),
    ] {
        let shown: Vec<i64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(shown.len(), 2, "{hits:#?}");
        assert!(shown.contains(&other), "{hits:#?}");
        let (lead, similar) = hits.iter().find(|h| h.0 != other).unwrap();
        assert!(copies.contains(lead));
        let mut all: Vec<i64> = similar.iter().map(|m| m.id).collect();
        all.push(*lead);
        all.sort();
        assert_eq!(all, copies, "each copy once, as the lead or as its similar");
        assert!(hits.iter().find(|h| h.0 == other).unwrap().1.is_empty());
    }
}
