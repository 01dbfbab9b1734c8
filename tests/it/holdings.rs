//! Who holds what, on random vectors (the model is not under test here): tellings and their
//! chains, witnessing, strengths, drafts to any depth, axes, pages and cursors, isolation on
//! every read path, bad input that leaves the file as it was; and property tests that a draft
//! reads as main with its changes applied, that merging keeps what the draft read, that
//! isolation holds, and that the accelerated narrator search returns the exact top-k.

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use umwelt::bench::Rng;
use umwelt::store::holdings::{
    ClaimId, HolderId, How, Kind, Listing, NewClaim, Reader, Telling, View,
};
use umwelt::store::Store;
use umwelt::Error;

use crate::common;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("who.sqlite")).unwrap();
    (dir, s)
}

fn claim(holder: HolderId, text: &str, about: &[&str]) -> NewClaim {
    NewClaim {
        holder,
        text: text.into(),
        kind: Kind::Fact,
        about: about.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn tell(claim: ClaimId, from: HolderId, to: HolderId) -> Telling {
    Telling {
        claim,
        from,
        to,
        at: None,
    }
}

/// Every claim id a holder holds in a view, read a page at a time.
fn all_held(s: &Store, h: HolderId, v: &View) -> Vec<(ClaimId, How, Option<String>)> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = s
            .holdings(&Listing::Holder(h), v, 7, cursor.as_deref())
            .unwrap();
        out.extend(
            page.holdings
                .iter()
                .map(|x| (x.claim, x.how, x.from.clone())),
        );
        match page.next {
            Some(n) => cursor = Some(n),
            None => break,
        }
    }
    out
}

/// The file's bytes, to show a refused write changed nothing.
fn snapshot(s: &Store) -> Vec<(ClaimId, HolderId, String, f64)> {
    let mut rows = Vec::new();
    for (h, _) in s.holders().unwrap() {
        for x in all_held(s, h, &View::main()) {
            let who = s.who_holds(&View::main(), x.0).unwrap();
            let mine = who
                .iter()
                .find(|w| {
                    Some(&w.holder)
                        == s.holders()
                            .unwrap()
                            .iter()
                            .find(|(i, _)| *i == h)
                            .map(|(_, n)| n)
                })
                .unwrap();
            rows.push((x.0, h, mine.how.as_str().to_string(), mine.strength));
        }
    }
    rows
}

#[test]
fn a_telling_keeps_its_chain_and_nothing_is_overwritten() {
    let _p = common::shared();
    let (_d, s) = store();
    let (ada, bram, cleo) = (
        s.add_holder("Ada").unwrap(),
        s.add_holder("Bram").unwrap(),
        s.add_holder("Cleo").unwrap(),
    );
    let c = s
        .commit(
            &View::main(),
            claim(ada, "The mill burned down.", &["mill"]),
        )
        .unwrap();
    assert!(s.holds(&View::main(), ada, c).unwrap());
    assert!(!s.holds(&View::main(), bram, c).unwrap());
    s.transmit_batch(&View::main(), &[tell(c, ada, bram)])
        .unwrap();
    let w = s
        .transmit_batch(&View::main(), &[tell(c, bram, cleo), tell(c, ada, cleo)])
        .unwrap();
    assert_eq!(
        (w.made, w.already_held),
        (1, 1),
        "Cleo keeps Bram's telling"
    );
    let who = s.who_holds(&View::main(), c).unwrap();
    let by: HashMap<&str, (How, Option<&str>)> = who
        .iter()
        .map(|w| (w.holder.as_str(), (w.how, w.from.as_deref())))
        .collect();
    assert_eq!(by["Ada"], (How::Authored, None));
    assert_eq!(by["Bram"], (How::Told, Some("Ada")));
    assert_eq!(by["Cleo"], (How::Told, Some("Bram")));
    // Contradicting claims both stay, each with its holder and time.
    let d = s
        .commit(
            &View::main(),
            claim(bram, "The mill is standing.", &["mill"]),
        )
        .unwrap();
    let page = s
        .holdings(&Listing::About("mill".into()), &View::main(), 50, None)
        .unwrap();
    let claims: BTreeSet<ClaimId> = page.holdings.iter().map(|h| h.claim).collect();
    assert_eq!(claims, BTreeSet::from([c, d]));
    assert_eq!(
        page.holdings.len(),
        4,
        "three hold the fire, one the standing mill"
    );
    // Adjust changes the strength, never the text.
    s.adjust_batch(&View::main(), &[(bram, c, 0.25)]).unwrap();
    let who = s.who_holds(&View::main(), c).unwrap();
    assert_eq!(
        who.iter().find(|w| w.holder == "Bram").unwrap().strength,
        0.25
    );
    let held = s
        .holdings(&Listing::Holder(bram), &View::main(), 50, None)
        .unwrap();
    assert!(held
        .holdings
        .iter()
        .any(|h| h.text == "The mill burned down."));
}

#[test]
fn bad_input_is_refused_clearly_and_changes_nothing() {
    let _p = common::shared();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let bram = s.add_holder("Bram").unwrap();
    let c = s
        .commit(&View::main(), claim(ada, "A fact.", &["x"]))
        .unwrap();
    let before = snapshot(&s);
    let msg = |e: Error| e.to_string();
    assert!(msg(s.holder("Nobody").unwrap_err()).contains("Nobody"));
    assert!(matches!(
        s.holds(&View::main(), 999, c),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        s.holds(&View::main(), ada, 999),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        s.who_holds(&View::main(), 999),
        Err(Error::NotFound(_))
    ));
    // Cleo does not hold c: she cannot tell it, and the valid telling in the batch is not kept.
    let cleo = s.add_holder("Cleo").unwrap();
    let e = s
        .transmit_batch(&View::main(), &[tell(c, ada, bram), tell(c, cleo, ada)])
        .unwrap_err();
    assert!(msg(e).contains("does not hold"));
    assert!(msg(s.transmit_batch(&View::main(), &[]).unwrap_err()).contains("empty"));
    let million: Vec<Telling> = (0..1_000_000).map(|_| tell(c, ada, bram)).collect();
    assert!(msg(s.transmit_batch(&View::main(), &million).unwrap_err()).contains("split"));
    assert!(s.adjust_batch(&View::main(), &[(bram, c, 0.5)]).is_err());
    assert!(s.adjust_batch(&View::main(), &[(ada, c, 7.0)]).is_err());
    assert!(matches!(
        s.holdings(&Listing::About("nowhere".into()), &View::main(), 50, None),
        Err(Error::NotFound(_))
    ));
    // A cursor from another listing, or made up.
    for _ in 0..60 {
        s.commit(&View::main(), claim(ada, "More.", &["x"]))
            .unwrap();
    }
    let page = s
        .holdings(&Listing::Holder(ada), &View::main(), 50, None)
        .unwrap();
    let next = page.next.unwrap();
    let e = s
        .holdings(&Listing::About("x".into()), &View::main(), 50, Some(&next))
        .unwrap_err();
    assert!(msg(e).contains("cursor"));
    assert!(s
        .holdings(&Listing::Holder(ada), &View::main(), 50, Some("nonsense"))
        .is_err());
    // Drafts: unknown, a parent that does not exist, a merge into a discarded draft.
    assert!(matches!(s.open_draft(Some(77)), Err(Error::NotFound(_))));
    let a = s.open_draft(None).unwrap();
    let b = s.open_draft(Some(a)).unwrap();
    s.commit(&View::in_draft(b), claim(ada, "Only in b.", &["x"]))
        .unwrap();
    s.discard_draft(a).unwrap();
    let e = s.merge_draft(b).unwrap_err();
    assert!(msg(e).contains("discarded"));
    assert!(s.holds(&View::in_draft(b), ada, c).is_err());
    assert!(s.discard_draft(a).is_err(), "discarding twice");
    let after = snapshot(&s);
    assert_eq!(before.len() + 60, after.len());
    assert!(before.iter().all(|r| after.contains(r)));
}

#[test]
fn drafts_nest_read_through_retract_merge_and_discard() {
    let _p = common::shared();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let bram = s.add_holder("Bram").unwrap();
    let c1 = s
        .commit(&View::main(), claim(ada, "On main.", &["e"]))
        .unwrap();
    let d1 = s.open_draft(None).unwrap();
    let d2 = s.open_draft(Some(d1)).unwrap();
    let d3 = s.open_draft(Some(d2)).unwrap();
    let (v1, v2, v3) = (View::in_draft(d1), View::in_draft(d2), View::in_draft(d3));
    let c2 = s.commit(&v1, claim(ada, "In d1.", &["e"])).unwrap();
    s.transmit_batch(&v2, &[tell(c2, ada, bram)]).unwrap();
    s.retract_batch(&v3, &[(ada, c1)]).unwrap();
    // Main sees none of it; each draft sees its ancestors' and its own.
    assert!(matches!(
        s.holds(&View::main(), ada, c2),
        Err(Error::NotFound(_))
    ));
    assert!(s.holds(&v1, ada, c2).unwrap() && !s.holds(&v1, bram, c2).unwrap());
    assert!(s.holds(&v3, bram, c2).unwrap());
    assert!(s.holds(&v2, ada, c1).unwrap() && !s.holds(&v3, ada, c1).unwrap());
    let about = s
        .holdings(&Listing::About("e".into()), &v3, 50, None)
        .unwrap();
    let seen: BTreeSet<(String, ClaimId)> = about
        .holdings
        .iter()
        .map(|h| (h.holder.clone(), h.claim))
        .collect();
    assert_eq!(
        seen,
        BTreeSet::from([("Ada".into(), c2), ("Bram".into(), c2)])
    );
    // Merge d3 into d2: d2 now reads as d3 did; d3 can no longer be read.
    s.merge_draft(d3).unwrap();
    assert!(!s.holds(&v2, ada, c1).unwrap());
    assert!(s.holds(&v3, ada, c1).is_err());
    // Discard d2: d1 is as it was.
    s.discard_draft(d2).unwrap();
    assert!(s.holds(&v1, ada, c1).unwrap() && !s.holds(&v1, bram, c2).unwrap());
    // Merge d1 into main: its claim is everyone's to see now.
    s.merge_draft(d1).unwrap();
    assert!(s.holds(&View::main(), ada, c2).unwrap());
    assert!(s.holds(&View::main(), ada, c1).unwrap());
}

#[test]
fn reads_as_of_a_position_on_an_axis() {
    let _p = common::shared();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let mut ids = Vec::new();
    for day in 0..10 {
        let mut c = claim(ada, &format!("Day {day}."), &["story"]);
        c.axes = vec![("day".into(), day)];
        ids.push(s.commit(&View::main(), c).unwrap());
    }
    let off_axis = s
        .commit(&View::main(), claim(ada, "No day.", &["story"]))
        .unwrap();
    let v = View::main().as_of("day", 4);
    assert!(s.holds(&v, ada, ids[4]).unwrap());
    assert!(!s.holds(&v, ada, ids[5]).unwrap());
    assert!(!s.holds(&v, ada, off_axis).unwrap());
    assert!(s.holds(&View::main(), ada, ids[9]).unwrap());
    let held: Vec<ClaimId> = all_held(&s, ada, &v).into_iter().map(|x| x.0).collect();
    assert_eq!(held, ids[..5].iter().rev().copied().collect::<Vec<_>>());
    // A draft keeps its rows' positions.
    let d = s.open_draft(None).unwrap();
    let mut c = claim(ada, "Day 2, in a draft.", &["story"]);
    c.axes = vec![("day".into(), 2)];
    let in_draft = s.commit(&View::in_draft(d), c).unwrap();
    assert!(s
        .holds(&View::in_draft(d).as_of("day", 3), ada, in_draft)
        .unwrap());
    assert!(!s
        .holds(&View::in_draft(d).as_of("day", 1), ada, in_draft)
        .unwrap());
}

/// Claims with random vectors for two holders; each search path returns only what its reader
/// holds.
#[test]
fn isolation_holds_on_every_search_path() {
    let _p = common::exclusive();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let bram = s.add_holder("Bram").unwrap();
    let mut r = Rng::new(5);
    let mut mine = BTreeSet::new();
    for i in 0..300 {
        let who = if i % 3 == 0 { ada } else { bram };
        let kind = if i % 5 == 0 {
            Kind::Opinion
        } else {
            Kind::Event
        };
        let c = s
            .commit(
                &View::main(),
                NewClaim {
                    kind,
                    ..claim(
                        who,
                        &format!("Someone said gift number {i}; NEAR( \"x OR -y:"),
                        &["gift"],
                    )
                },
            )
            .unwrap();
        s.embedding_put(&[(c, r.vector().as_slice())], "random-unit")
            .unwrap();
        if who == ada {
            mine.insert(c);
        }
    }
    for on in [true, false] {
        umwelt::optimisations::set_enabled(Some(on));
        for q in 0..10 {
            let v = r.vector();
            for query in ["gift", "said", "\"unbalanced", "NEAR(gift", "x OR -y:", "*"] {
                let hits = s
                    .search_claims(Reader::Holder(ada), &View::main(), query, Some(&v), 50)
                    .unwrap();
                assert!(!hits.is_empty() || query == "*");
                assert!(hits.iter().all(|h| mine.contains(&h.claim)), "{query} {q}");
                let narrated = s
                    .search_claims(Reader::Narrator, &View::main(), query, Some(&v), 50)
                    .unwrap();
                assert!(narrated.iter().all(|h| h.kind != Kind::Opinion));
            }
            let near = s
                .nearest_claims(Reader::Holder(ada), &View::main(), &v, 30, false)
                .unwrap();
            assert_eq!(near.len(), 30);
            assert!(near.iter().all(|(c, _)| mine.contains(c)));
        }
    }
    umwelt::optimisations::set_enabled(None);
}

#[test]
fn accelerated_narrator_search_returns_the_exact_top_k() {
    let _p = common::shared();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let mut r = Rng::new(11);
    for chunk in 0..10 {
        let claims: Vec<NewClaim> = (0..1_000)
            .map(|i| NewClaim {
                kind: if i % 7 == 0 {
                    Kind::Opinion
                } else {
                    Kind::Fact
                },
                ..claim(ada, &format!("claim {chunk}.{i}"), &[])
            })
            .collect();
        let ids = s.commit_batch(&View::main(), &claims).unwrap();
        let vs: Vec<Vec<f32>> = ids.iter().map(|_| r.vector()).collect();
        let rows: Vec<(ClaimId, &[f32])> = ids
            .iter()
            .zip(&vs)
            .map(|(i, v)| (*i, v.as_slice()))
            .collect();
        s.embedding_put(&rows, "random-unit").unwrap();
    }
    let queries = 200;
    let mut same = 0;
    for _ in 0..queries {
        let q = r.vector();
        let fast = s
            .nearest_claims(Reader::Narrator, &View::main(), &q, 20, false)
            .unwrap();
        let exact = s
            .nearest_claims(Reader::Narrator, &View::main(), &q, 20, true)
            .unwrap();
        assert_eq!(exact.len(), 20);
        if fast.iter().map(|x| x.0).eq(exact.iter().map(|x| x.0)) {
            same += 1;
        }
    }
    assert!(same * 100 >= queries * 99, "{same} of {queries} agree");
}

#[test]
fn a_small_town_is_built_and_read() {
    let _p = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("town.sqlite");
    let stats = umwelt::bench::town::build_town(
        &path,
        5,
        42,
        &mut |_| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(stats.claims, 500);
    assert!(stats.tellings_made > 200, "{stats:?}");
    let s = Store::open(&path).unwrap();
    assert_eq!(s.holders().unwrap().len(), 40);
    // Deterministic: the same seed makes the same town.
    let again = dir.path().join("again.sqlite");
    umwelt::bench::town::build_town(&again, 5, 42, &mut |_| {}, &Default::default()).unwrap();
    let t = Store::open(&again).unwrap();
    for c in [1, 250, 500] {
        assert_eq!(
            s.who_holds(&View::main(), c).unwrap(),
            t.who_holds(&View::main(), c).unwrap()
        );
    }
    assert!(
        umwelt::bench::town::build_town(&path, 5, 42, &mut |_| {}, &Default::default()).is_err()
    );
}

// ---- properties ----

/// One step of a random history. Indices are taken modulo what exists.
#[derive(Debug, Clone)]
enum Op {
    Commit { holder: u8, opinion: bool },
    Tell { claim: u8, from: u8, to: u8 },
    Witness { claim: u8, holder: u8 },
    Retract { claim: u8, holder: u8 },
    Adjust { claim: u8, holder: u8, strength: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..4, any::<bool>()).prop_map(|(holder, opinion)| Op::Commit { holder, opinion }),
        3 => (any::<u8>(), 0u8..4, 0u8..4).prop_map(|(claim, from, to)| Op::Tell { claim, from, to }),
        1 => (any::<u8>(), 0u8..4).prop_map(|(claim, holder)| Op::Witness { claim, holder }),
        1 => (any::<u8>(), 0u8..4).prop_map(|(claim, holder)| Op::Retract { claim, holder }),
        1 => (any::<u8>(), 0u8..4, 0u8..=10).prop_map(|(claim, holder, strength)| Op::Adjust { claim, holder, strength }),
    ]
}

const HOLDERS: [&str; 4] = ["Ada", "Bram", "Cleo", "Dov"];

/// Apply `op` in view `v`; invalid steps (telling what one does not hold…) are skipped, asking
/// the store, so two stores that read alike make the same choices.
fn apply(s: &Store, v: &View, claims: &mut Vec<ClaimId>, op: &Op, r: &mut Rng) {
    let h = |i: u8| s.holder(HOLDERS[i as usize % 4]).unwrap();
    let pick = |claims: &Vec<ClaimId>, i: u8| claims[i as usize % claims.len()];
    match *op {
        Op::Commit { holder, opinion } => {
            let c = s
                .commit(
                    v,
                    NewClaim {
                        kind: if opinion { Kind::Opinion } else { Kind::Event },
                        ..claim(h(holder), &format!("claim {}", claims.len()), &["town"])
                    },
                )
                .unwrap();
            s.embedding_put(&[(c, r.vector().as_slice())], "random-unit")
                .unwrap();
            claims.push(c);
        }
        _ if claims.is_empty() => {}
        Op::Tell { claim, from, to } => {
            let c = pick(claims, claim);
            if from % 4 != to % 4 && s.holds(v, h(from), c).unwrap() {
                s.transmit_batch(v, &[tell(c, h(from), h(to))]).unwrap();
            }
        }
        Op::Witness { claim, holder } => {
            s.witness(v, &[pick(claims, claim)], &[h(holder)], None)
                .unwrap();
        }
        Op::Retract { claim, holder } => {
            let c = pick(claims, claim);
            if s.holds(v, h(holder), c).unwrap() {
                s.retract_batch(v, &[(h(holder), c)]).unwrap();
            }
        }
        Op::Adjust {
            claim,
            holder,
            strength,
        } => {
            let c = pick(claims, claim);
            if s.holds(v, h(holder), c).unwrap() {
                s.adjust_batch(v, &[(h(holder), c, strength as f64 / 10.0)])
                    .unwrap();
            }
        }
    }
}

/// Everything a reader can see in a view: each holder's holdings (with provenance and
/// strength), who holds each claim, and the holdings about the entity.
fn read_all(s: &Store, v: &View, claims: &[ClaimId]) -> String {
    // Times differ between two files written one after the other: compare what, not when.
    let mut lines = Vec::new();
    for name in HOLDERS {
        let h = s.holder(name).unwrap();
        let page = s.holdings(&Listing::Holder(h), v, 1_000, None).unwrap();
        for x in page.holdings {
            lines.push(format!(
                "{name} holds {} {:?} {:?} {}",
                x.claim, x.how, x.from, x.strength
            ));
        }
    }
    for &c in claims {
        for w in s.who_holds(v, c).unwrap() {
            lines.push(format!(
                "{c} held by {} {:?} {:?} {}",
                w.holder, w.how, w.from, w.strength
            ));
        }
    }
    if let Ok(p) = s.holdings(&Listing::About("town".into()), v, 1_000, None) {
        for h in p.holdings {
            lines.push(format!("about town: {} {}", h.holder, h.claim));
        }
    }
    lines.sort();
    lines.join("\n")
}

fn fresh_with_holders() -> (tempfile::TempDir, Store) {
    let (d, s) = store();
    for n in HOLDERS {
        s.add_holder(n).unwrap();
    }
    (d, s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A read in a draft (of depth 1 to 3) equals applying its changes to main and reading;
    /// merging the drafts down equals what the draft read; tellings keep their chains;
    /// nobody's read returns a claim they do not hold.
    #[test]
    fn drafts_read_as_main_with_their_changes_and_merge_to_the_same(
        base in prop::collection::vec(op(), 1..25),
        layers in prop::collection::vec(prop::collection::vec(op(), 0..12), 1..4),
    ) {
        let _p = common::shared();
        let (_a, drafted) = fresh_with_holders();
        let (_b, direct) = fresh_with_holders();
        let (mut c1, mut c2) = (Vec::new(), Vec::new());
        let (mut r1, mut r2) = (Rng::new(1), Rng::new(1));
        for o in &base {
            apply(&drafted, &View::main(), &mut c1, o, &mut r1);
            apply(&direct, &View::main(), &mut c2, o, &mut r2);
        }
        let mut parent = None;
        let mut drafts = Vec::new();
        for layer in &layers {
            let d = drafted.open_draft(parent).unwrap();
            drafts.push(d);
            for o in layer {
                apply(&drafted, &View::in_draft(d), &mut c1, o, &mut r1);
                apply(&direct, &View::main(), &mut c2, o, &mut r2);
            }
            parent = Some(d);
        }
        prop_assert_eq!(&c1, &c2);
        let top = View::in_draft(*drafts.last().unwrap());
        let in_draft = read_all(&drafted, &top, &c1);
        prop_assert_eq!(&in_draft, &read_all(&direct, &View::main(), &c2));
        // Isolation and chains, on the draft's reads.
        for name in HOLDERS {
            let h = drafted.holder(name).unwrap();
            let page = drafted.holdings(&Listing::Holder(h), &top, 1_000, None).unwrap();
            let held: BTreeSet<ClaimId> = page.holdings.iter().map(|x| x.claim).collect();
            for x in &page.holdings {
                prop_assert!(drafted.holds(&top, h, x.claim).unwrap());
                if x.how == How::Told {
                    let teller = x.from.clone().unwrap();
                    prop_assert!(teller != name);
                    let who = drafted.who_holds(&top, x.claim).unwrap();
                    let _ = who.iter().find(|w| w.holder == name).unwrap();
                }
            }
            let q = Rng::new(h as u64).vector();
            for (c, _) in drafted.nearest_claims(Reader::Holder(h), &top, &q, 50, false).unwrap() {
                prop_assert!(held.contains(&c));
            }
            for hit in drafted.search_claims(Reader::Holder(h), &top, "claim", Some(&q), 50).unwrap() {
                prop_assert!(held.contains(&hit.claim));
            }
        }
        // Merge each draft into its parent, nearest first: main then reads as the draft did.
        for d in drafts.iter().rev() {
            drafted.merge_draft(*d).unwrap();
        }
        prop_assert_eq!(read_all(&drafted, &View::main(), &c1), in_draft);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The accelerated search (int8 codes, then f32 re-scoring) returns the exact top-k for a
    /// holder and for the narrator in at least 99 % of queries, on corpora of any size, with
    /// near-duplicate vectors (which int8 codes cannot tell apart) and opinions mixed in; and
    /// every score it gives is the exact one.
    #[test]
    fn accelerated_search_agrees_with_exact_search(
        seed in any::<u64>(),
        size in 1usize..3_000,
        near_duplicates in 0usize..200,
        k in 1usize..40,
    ) {
        let _p = common::shared();
        let (_d, s) = store();
        let ada = s.add_holder("Ada").unwrap();
        let bram = s.add_holder("Bram").unwrap();
        let mut r = Rng::new(seed);
        let claims: Vec<NewClaim> = (0..size)
            .map(|i| NewClaim {
                kind: if i % 7 == 0 { Kind::Opinion } else { Kind::Fact },
                ..claim(if i % 3 == 0 { bram } else { ada }, &format!("claim {i}"), &[])
            })
            .collect();
        let ids = s.commit_batch(&View::main(), &claims).unwrap();
        let mut vs: Vec<Vec<f32>> = ids.iter().map(|_| r.vector()).collect();
        for j in 0..near_duplicates.min(size.saturating_sub(1)) {
            // A copy of another vector, moved by less than an int8 step.
            let from = (r.next() as usize) % size;
            let to = (from + 1 + j) % size;
            let mut v = vs[from].clone();
            let i = (r.next() as usize) % v.len();
            v[i] += 1e-4;
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            vs[to] = v.iter().map(|x| x / n).collect();
        }
        let rows: Vec<(ClaimId, &[f32])> =
            ids.iter().zip(&vs).map(|(i, v)| (*i, v.as_slice())).collect();
        s.embedding_put(&rows, "random-unit").unwrap();
        let exact_score = |c: ClaimId, q: &[f32]| {
            let at = ids.iter().position(|x| *x == c).unwrap();
            vs[at].iter().zip(q).map(|(a, b)| a * b).sum::<f32>()
        };
        let queries = 100;
        for reader in [Reader::Holder(ada), Reader::Narrator] {
            let mut same = 0;
            for _ in 0..queries {
                // Half the queries sit on a stored vector: the nearest are near-duplicates.
                let q = if r.next() % 2 == 0 { vs[(r.next() as usize) % size].clone() } else { r.vector() };
                let fast = s.nearest_claims(reader, &View::main(), &q, k, false).unwrap();
                let exact = s.nearest_claims(reader, &View::main(), &q, k, true).unwrap();
                prop_assert_eq!(fast.len(), exact.len());
                for (c, score) in &fast {
                    prop_assert!((exact_score(*c, &q) - score).abs() < 1e-4, "claim {} scored {}", c, score);
                }
                if fast.iter().map(|x| x.0).eq(exact.iter().map(|x| x.0)) {
                    same += 1;
                }
            }
            prop_assert!(same * 100 >= queries * 99, "{:?}: {} of {} agree", reader, same, queries);
        }
    }
}

// ---- the command line (embeds with the real model) ----

fn cli(db: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_umwelt-cli"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

fn ok(db: &std::path::Path, args: &[&str]) -> String {
    let (success, out, err) = cli(db, args);
    assert!(success, "{args:?}: {err}");
    out
}

#[test]
fn the_command_line_contract() {
    let _p = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("who.sqlite");
    for n in ["Ada", "Bram", "Cleo"] {
        ok(&db, &["holder", "add", n]);
    }
    let c = ok(
        &db,
        &[
            "claim",
            "add",
            "--holder",
            "Ada",
            "--about",
            "mill",
            "--about",
            "Bram",
            "--kind",
            "event",
            "--axis",
            "day=3",
            "The mill burned down on Tuesday.",
        ],
    );
    let c: i64 = c.parse().expect("a claim id");
    let cs = c.to_string();
    ok(&db, &["tell", "--from", "Ada", "--to", "Bram", &cs]);
    ok(&db, &["witness", "--claim", &cs, "--holders", "Cleo,Ada"]);
    ok(
        &db,
        &[
            "adjust",
            "--holder",
            "Bram",
            "--claim",
            &cs,
            "--strength",
            "0.4",
        ],
    );
    assert_eq!(ok(&db, &["holds", "Bram", &cs]), "true");
    assert_eq!(ok(&db, &["holds", "--axis", "day=2", "Ada", &cs]), "false");
    assert_eq!(ok(&db, &["holds", "--axis", "day=3", "Ada", &cs]), "true");
    let who: serde_json::Value =
        serde_json::from_str(&ok(&db, &["who-holds", "--json", &cs])).unwrap();
    let who = who.as_array().unwrap();
    assert_eq!(who.len(), 3);
    let bram = who.iter().find(|w| w["holder"] == "Bram").unwrap();
    assert_eq!(
        (bram["how"].as_str(), bram["from"].as_str()),
        (Some("told"), Some("Ada"))
    );
    assert_eq!(bram["strength"].as_f64(), Some(0.4));
    assert!(who
        .iter()
        .any(|w| w["holder"] == "Cleo" && w["how"] == "witnessed"));
    for i in 0..4 {
        ok(
            &db,
            &[
                "claim",
                "add",
                "--holder",
                "Bram",
                "--about",
                "mill",
                &format!("Note {i} about the mill."),
            ],
        );
    }
    let page: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &["holdings", "--about", "mill", "--limit", "4", "--json"],
    ))
    .unwrap();
    assert_eq!(page["holdings"].as_array().unwrap().len(), 4);
    let next = page["next"].as_str().unwrap().to_string();
    let rest: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &[
            "holdings", "--about", "mill", "--limit", "4", "--cursor", &next, "--json",
        ],
    ))
    .unwrap();
    assert_eq!(
        rest["holdings"].as_array().unwrap().len(),
        3,
        "7 holdings about the mill"
    );
    let (success, _, err) = cli(
        &db,
        &["holdings", "--holder", "Ada", "--cursor", &next, "--json"],
    );
    assert!(
        !success && err.contains("cursor") && err.lines().count() == 1,
        "{err}"
    );
    // Drafts.
    let d = ok(&db, &["draft", "open"]);
    let d2 = ok(&db, &["draft", "open", "--parent", &d]);
    let secret = ok(
        &db,
        &[
            "claim",
            "add",
            "--holder",
            "Cleo",
            "--draft",
            &d2,
            "Cleo hid the ledger.",
        ],
    );
    let (success, _, _) = cli(&db, &["holds", "Cleo", &secret]);
    assert!(!success, "main cannot see a draft's claim");
    assert_eq!(ok(&db, &["holds", "--draft", &d2, "Cleo", &secret]), "true");
    ok(&db, &["draft", "merge", &d2]);
    assert_eq!(ok(&db, &["holds", "--draft", &d, "Cleo", &secret]), "true");
    ok(&db, &["draft", "merge", &d]);
    assert_eq!(ok(&db, &["holds", "Cleo", &secret]), "true");
    let d3 = ok(&db, &["draft", "open"]);
    ok(&db, &["draft", "discard", &d3]);
    let (success, _, err) = cli(&db, &["draft", "merge", &d3]);
    assert!(!success && err.contains("discarded"), "{err}");
    // Search: scoped, narrator, hostile text, explained.
    let hits: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &[
            "search",
            "--holder",
            "Cleo",
            "--json",
            "--explain",
            "who hid the \"ledger NEAR( -x: OR *",
        ],
    ))
    .unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(hits[0]["text"], "Cleo hid the ledger.");
    assert!(hits[0]["why"]["keyword_rank"].as_u64().is_some());
    assert!(
        hits.iter().all(|h| h["text"] != "Note 0 about the mill."),
        "Cleo does not hold Bram's notes"
    );
    let all: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &[
            "search",
            "--narrator",
            "--k",
            "20",
            "--json",
            "fire at the mill",
        ],
    ))
    .unwrap();
    assert!(all.as_array().unwrap().len() >= 6);
    // Unknown things: exit 1, one line, never an empty success.
    for args in [
        vec!["holds", "Nobody", &cs],
        vec!["holds", "Ada", "999999"],
        vec!["who-holds", "--json", "999999"],
        vec!["holdings", "--holder", "Nobody", "--json"],
        vec!["holdings", "--about", "nowhere", "--json"],
        vec!["search", "--holder", "Nobody", "--json", "x"],
        vec!["draft", "merge", "4242"],
        vec!["tell", "--from", "Cleo", "--to", "Ada", "999999"],
    ] {
        let (success, out, err) = cli(&db, &args);
        assert!(!success && out.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // The town, into a file of its own.
    let town = dir.path().join("town.sqlite");
    ok(&town, &["town", "--days", "2"]);
    let page: serde_json::Value =
        serde_json::from_str(&ok(&town, &["holdings", "--holder", "Ada", "--json"])).unwrap();
    assert!(!page["holdings"].as_array().unwrap().is_empty());
    let (success, _, _) = cli(&town, &["town", "--days", "2"]);
    assert!(!success, "a town is never built over an existing file");
    // The town suite runs end to end (warm-up included) and says how to repeat it.
    let report = dir.path().join("town.json");
    ok(
        &db,
        &[
            "bench",
            "--suite",
            "town",
            "--days",
            "2",
            "--iterations",
            "2",
            "--json",
            report.to_str().unwrap(),
        ],
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(r["command"].as_str().unwrap().contains("--suite town"));
    let rows = r["results"].as_array().unwrap();
    for s in [
        "holds",
        "holdings_about",
        "transmit_batch",
        "vector_narrator",
        "town_file_mib",
    ] {
        assert!(rows.iter().any(|m| m["scenario"] == s), "{s} measured");
    }
    let (success, _, err) = cli(&db, &["bench", "--suite", "nowhere"]);
    assert!(!success && err.contains("town"), "{err}");
}

#[test]
fn deleting_a_claim_leaves_nothing_about_it() {
    let _p = common::shared();
    let (_d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let bram = s.add_holder("Bram").unwrap();
    let c = s
        .commit(
            &View::main(),
            claim(ada, "About the mill.", &["mill", "Ada"]),
        )
        .unwrap();
    let keep = s
        .commit(&View::main(), claim(ada, "Also the mill.", &["mill"]))
        .unwrap();
    s.transmit_batch(&View::main(), &[tell(c, ada, bram)])
        .unwrap();
    s.delete(c).unwrap();
    let page = s
        .holdings(&Listing::About("mill".into()), &View::main(), 50, None)
        .unwrap();
    assert_eq!(
        page.holdings.iter().map(|h| h.claim).collect::<Vec<_>>(),
        vec![keep]
    );
    assert!(s
        .holdings(&Listing::About("Ada".into()), &View::main(), 50, None)
        .unwrap()
        .holdings
        .is_empty());
    assert_eq!(
        s.holdings(&Listing::Holder(bram), &View::main(), 50, None)
            .unwrap()
            .holdings
            .len(),
        0
    );
}

/// A holder's codes are kept between searches: a telling, a retraction or another process's
/// write is seen at the next search, never a stale set.
#[test]
fn a_holders_kept_codes_follow_every_write() {
    let _p = common::shared();
    let (d, s) = store();
    let ada = s.add_holder("Ada").unwrap();
    let bram = s.add_holder("Bram").unwrap();
    let mut r = Rng::new(3);
    let mut put = |s: &Store, who: HolderId, text: &str| {
        let c = s.commit(&View::main(), claim(who, text, &[])).unwrap();
        s.embedding_put(&[(c, r.vector().as_slice())], "random-unit")
            .unwrap();
        c
    };
    let mine: Vec<ClaimId> = (0..300).map(|i| put(&s, ada, &format!("a{i}"))).collect();
    let theirs = put(&s, bram, "b");
    let near = |s: &Store| -> BTreeSet<ClaimId> {
        // Every claim Ada holds: k as large as her set.
        let q = Rng::new(9).vector();
        s.nearest_claims(Reader::Holder(ada), &View::main(), &q, 1_000, false)
            .unwrap()
            .into_iter()
            .map(|x| x.0)
            .collect()
    };
    s.preload_claims().unwrap();
    assert_eq!(near(&s), mine.iter().copied().collect());
    s.transmit_batch(&View::main(), &[tell(theirs, bram, ada)])
        .unwrap();
    assert!(near(&s).contains(&theirs), "told: seen at once");
    s.retract_batch(&View::main(), &[(ada, mine[0])]).unwrap();
    assert!(!near(&s).contains(&mine[0]), "retracted: gone at once");
    // Another process's write.
    let other = Store::open(d.path().join("who.sqlite")).unwrap();
    other
        .retract_batch(&View::main(), &[(ada, mine[1])])
        .unwrap();
    assert!(
        !near(&s).contains(&mine[1]),
        "another connection's retraction is seen"
    );
    assert_eq!(near(&s).len(), 299);
}
