//! The town suite: who holds what, on the second seed's generated town (`bench/town.rs`). A
//! scenario's size is the town's days (3 360 is the full town; `--sizes` scales it down).
//! Reads run first, on the town as built; the writes then add to it.
//!
//! Targets are the issue's, against the seed's figures; the harness compares them with p50 as
//! it does everywhere, and `docs/PERFORMANCE.md` records p99 beside them.

use super::{prepared, time, Ctx, Prepared, Sample, Scenario};
use crate::bench::corpus::Rng;
use crate::bench::town::{self, AUTHORED_PER_DAY, COMMON_WORD, DAY_AXIS, HOLDERS};
use crate::error::Result;
use crate::store::holdings::{Kind, Listing, NewClaim, Reader, Telling, View};
use crate::store::Store;

const FULL: &[usize] = &[town::FULL_DAYS];

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "town_open",
        "opening the town's file and reading one holding",
        open,
    )
    .targets(&[(0, 2.0)])
    .sizes(FULL)
    .corpus_sized(),
    Scenario::new("holds", "does a holder hold a claim", |c, s| {
        holds(c, s, 0, false)
    })
    .targets(&[(0, 0.05)])
    .sizes(FULL)
    .iterations(2_000)
    .corpus_sized(),
    Scenario::new(
        "holds_draft3",
        "holds, read through a draft of depth 3",
        |c, s| holds(c, s, 3, false),
    )
    .targets(&[(0, 0.1)])
    .sizes(FULL)
    .iterations(2_000)
    .corpus_sized(),
    Scenario::new(
        "holds_axis",
        "holds, as of a day on the town's axis",
        |c, s| holds(c, s, 0, true),
    )
    .sizes(FULL)
    .iterations(2_000)
    .corpus_sized(),
    Scenario::new(
        "holdings_about",
        "a page of 50 holdings about one entity",
        |c, s| about(c, s, 0),
    )
    .targets(&[(0, 0.75)])
    .sizes(FULL)
    .iterations(300)
    .corpus_sized()
    .both_ways(),
    Scenario::new(
        "holdings_about_draft3",
        "a page of 50 about one entity, through a draft of depth 3",
        |c, s| about(c, s, 3),
    )
    .sizes(FULL)
    .iterations(300)
    .corpus_sized(),
    Scenario::new("who_holds", "everyone who holds a claim", who_holds)
        .targets(&[(0, 1.0)])
        .sizes(FULL)
        .iterations(1_000)
        .corpus_sized(),
    Scenario::new(
        "vector_holder",
        "20 nearest among one holder's claims (on: int8 + f32 re-scoring; off: exact)",
        vector_holder,
    )
    .targets(&[(0, 1.0)])
    .sizes(FULL)
    .iterations(200)
    .corpus_sized()
    .both_ways(),
    Scenario::new(
        "vector_narrator",
        "20 nearest among every fact and event (on: int8 + f32 re-scoring; off: exact)",
        vector_narrator,
    )
    .targets(&[(0, 15.0)])
    .sizes(FULL)
    .iterations(100)
    .corpus_sized()
    .both_ways(),
    Scenario::new(
        "hybrid_common_word",
        "hybrid search for one holder, a word in most claims",
        hybrid,
    )
    .targets(&[(0, 10.0)])
    .sizes(FULL)
    .iterations(100)
    .corpus_sized(),
    Scenario::new("embedding_put", "putting 1 000 vectors", embedding_put)
        .targets(&[(0, 10.0)])
        .sizes(FULL)
        .iterations(20)
        .corpus_sized(),
    Scenario::new("commit", "one claim and its holding", |c, s| {
        commit(c, s, 1)
    })
    .targets(&[(0, 1.0)])
    .sizes(FULL)
    .iterations(200)
    .corpus_sized(),
    Scenario::new("commit_batch", "100 claims in one batch", |c, s| {
        commit(c, s, 100)
    })
    .targets(&[(0, 5.0)])
    .sizes(FULL)
    .iterations(50)
    .corpus_sized(),
    Scenario::new("transmit_batch", "a night of 2 000 tellings", transmit)
        .targets(&[(0, 150.0)])
        .sizes(FULL)
        .iterations(20)
        .corpus_sized(),
    Scenario::new("witness", "40 witnesses of 3 claims", witness)
        .targets(&[(0, 30.0)])
        .sizes(FULL)
        .iterations(30)
        .corpus_sized(),
    Scenario::new("adjust_batch", "2 000 strengths adjusted", adjust)
        .targets(&[(0, 150.0)])
        .sizes(FULL)
        .iterations(20)
        .corpus_sized(),
    Scenario::new(
        "town_file_mib",
        "the town's file without vectors, in MiB (reported as ms)",
        file_size,
    )
    .targets(&[(0, 300.0)])
    .sizes(FULL)
    .iterations(1)
    .corpus_sized(),
    Scenario::new(
        "narrator_rss_mib",
        "resident memory serving the narrator and holder searches, in MiB (reported as ms)",
        narrator_rss,
    )
    .targets(&[(0, 1024.0)])
    .sizes(FULL)
    .iterations(1)
    .corpus_sized(),
];

/// The suite.
pub(super) const SUITE: super::Suite = super::Suite {
    name: "town",
    about: "who holds what, on the second seed's generated town",
    areas: &[SCENARIOS],
};

fn claims(days: usize) -> u64 {
    (days * AUTHORED_PER_DAY) as u64
}

fn any_claim(r: &mut Rng, days: usize) -> i64 {
    (r.next() % claims(days)) as i64 + 1
}

fn any_holder(r: &mut Rng) -> i64 {
    (r.next() % HOLDERS as u64) as i64 + 1
}

/// Three drafts, one on the other, each with a few writes, on the town.
fn draft3(store: &Store, days: usize) -> Result<View> {
    let mut parent = None;
    let mut r = Rng::new(99);
    for level in 0..3 {
        let d = store.open_draft(parent)?;
        let view = View::in_draft(d);
        let claims: Vec<NewClaim> = (0..20)
            .map(|i| NewClaim {
                holder: any_holder(&mut r),
                text: format!("A rumour at level {level}, number {i}."),
                kind: Kind::Event,
                about: vec![town::holder_names()[i % HOLDERS].to_string()],
                ..Default::default()
            })
            .collect();
        store.commit_batch(&view, &claims)?;
        // And a telling of something main holds, so the draft also overrides main's rows.
        let c = any_claim(&mut r, days);
        if let Some(a) = store.who_holds(&view, c)?.first() {
            let from = store.holder(&a.holder)?;
            let to = from % HOLDERS as i64 + 1;
            store.transmit_batch(
                &view,
                &[Telling {
                    claim: c,
                    from,
                    to,
                    at: None,
                }],
            )?;
        }
        parent = Some(d);
    }
    Ok(View {
        draft: parent,
        axis: None,
    })
}

fn open(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let path = ctx.town(days)?;
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new(i as u64);
        let (h, c) = (any_holder(&mut r), any_claim(&mut r, days));
        let (ms, _) = time(|| {
            let s = Store::open(&path)?;
            s.holds(&View::main(), h, c)
        })?;
        Ok(Sample { ms, ids: None })
    })
}

fn holds(ctx: &mut Ctx, days: usize, depth: usize, axis: bool) -> Result<Prepared> {
    let path = ctx.town(days)?;
    let store = Store::open(&path)?;
    let mut view = if depth > 0 {
        draft3(&store, days)?
    } else {
        View::main()
    };
    if axis {
        view = view.as_of(DAY_AXIS, days as i64 / 2);
    }
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new(i as u64 ^ 0x5eed);
        let (h, c) = (any_holder(&mut r), any_claim(&mut r, days));
        let (ms, held) = time(|| store.holds(&view, h, c))?;
        Ok(Sample {
            ms,
            ids: Some(vec![held as i64]),
        })
    })
}

fn about(ctx: &mut Ctx, days: usize, depth: usize) -> Result<Prepared> {
    let path = ctx.town(days)?;
    let store = Store::open(&path)?;
    let view = if depth > 0 {
        draft3(&store, days)?
    } else {
        View::main()
    };
    let names = town::holder_names();
    prepared(ctx.warmup, move |i| {
        let e = names[i % names.len()].to_string();
        let (ms, page) = time(|| store.holdings(&Listing::About(e), &view, 50, None))?;
        Ok(Sample {
            ms,
            ids: Some(page.holdings.iter().map(|h| h.claim).collect()),
        })
    })
}

fn who_holds(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new(i as u64 ^ 0xabc);
        let c = any_claim(&mut r, days);
        let (ms, who) = time(|| store.who_holds(&View::main(), c))?;
        Ok(Sample {
            ms,
            ids: Some(vec![who.len() as i64]),
        })
    })
}

fn vector_holder(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    store.preload_claims()?;
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new((i as u64).wrapping_add(7_000));
        let h = any_holder(&mut r);
        let q = r.vector();
        let (ms, hits) =
            time(|| store.nearest_claims(Reader::Holder(h), &View::main(), &q, 20, false))?;
        Ok(Sample {
            ms,
            ids: Some(hits.iter().map(|h| h.0).collect()),
        })
    })
}

fn vector_narrator(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    store.preload_claims()?;
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new((i as u64).wrapping_add(9_000));
        let q = r.vector();
        let (ms, hits) =
            time(|| store.nearest_claims(Reader::Narrator, &View::main(), &q, 20, false))?;
        Ok(Sample {
            ms,
            ids: Some(hits.iter().map(|h| h.0).collect()),
        })
    })
}

fn hybrid(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    store.preload_claims()?;
    prepared(ctx.warmup, move |i| {
        let mut r = Rng::new((i as u64).wrapping_add(11_000));
        let h = any_holder(&mut r);
        let q = r.vector();
        let (ms, hits) = time(|| {
            store.search_claims(Reader::Holder(h), &View::main(), COMMON_WORD, Some(&q), 20)
        })?;
        Ok(Sample {
            ms,
            ids: Some(hits.iter().map(|h| h.claim).collect()),
        })
    })
}

fn embedding_put(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    let mut r = Rng::new(13);
    prepared(ctx.warmup, move |_| {
        let start = (r.next() % claims(days).saturating_sub(1_000).max(1)) as i64 + 1;
        let vectors: Vec<Vec<f32>> = (0..1_000).map(|_| r.vector()).collect();
        let n = (claims(days) as i64).min(1_000);
        let rows: Vec<(i64, &[f32])> = (0..n)
            .map(|k| (start + k, vectors[k as usize].as_slice()))
            .collect();
        let (ms, _) = time(|| store.embedding_put(&rows, town::VECTOR_MODEL))?;
        Ok(Sample { ms, ids: None })
    })
}

fn commit(ctx: &mut Ctx, days: usize, n: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    let mut r = Rng::new(17);
    prepared(ctx.warmup, move |i| {
        let claims: Vec<NewClaim> = (0..n)
            .map(|k| NewClaim {
                holder: any_holder(&mut r),
                text: format!("Bench claim {i}.{k}: someone said a thing at the well."),
                kind: Kind::Event,
                about: vec!["well".into(), town::holder_names()[k % HOLDERS].into()],
                axes: vec![(DAY_AXIS.into(), days as i64)],
                at: None,
            })
            .collect();
        let (ms, _) = time(|| store.commit_batch(&View::main(), &claims))?;
        Ok(Sample { ms, ids: None })
    })
}

fn transmit(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    let mut r = Rng::new(19);
    prepared(ctx.warmup, move |_| {
        // Tellers who hold what they tell: each claim's author (authors are found by who_holds
        // outside the timed part).
        let mut tellings = Vec::with_capacity(2_000);
        while tellings.len() < 2_000 {
            let c = any_claim(&mut r, days);
            let Some(author) = store
                .who_holds(&View::main(), c)?
                .into_iter()
                .find(|h| h.how == crate::store::holdings::How::Authored)
            else {
                continue;
            };
            let from = store.holder(&author.holder)?;
            let mut to = any_holder(&mut r);
            if to == from {
                to = to % HOLDERS as i64 + 1;
            }
            tellings.push(Telling {
                claim: c,
                from,
                to,
                at: None,
            });
        }
        let (ms, _) = time(|| store.transmit_batch(&View::main(), &tellings))?;
        Ok(Sample { ms, ids: None })
    })
}

fn witness(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    let holders: Vec<i64> = (1..=HOLDERS as i64).collect();
    let mut r = Rng::new(23);
    prepared(ctx.warmup, move |i| {
        let claims: Vec<NewClaim> = (0..3)
            .map(|k| NewClaim {
                holder: any_holder(&mut r),
                text: format!("Everyone saw the storm {i}.{k} break over the harbour."),
                kind: Kind::Event,
                about: vec!["harbour".into(), "storm".into()],
                ..Default::default()
            })
            .collect();
        let ids = store.commit_batch(&View::main(), &claims)?;
        let (ms, _) = time(|| store.witness(&View::main(), &ids, &holders, None))?;
        Ok(Sample { ms, ids: None })
    })
}

fn adjust(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    let mut r = Rng::new(29);
    prepared(ctx.warmup, move |_| {
        // Authored holdings: claim c's author, found outside the timed part.
        let mut changes = Vec::with_capacity(2_000);
        while changes.len() < 2_000 {
            let c = any_claim(&mut r, days);
            if let Some(a) = store.who_holds(&View::main(), c)?.first() {
                changes.push((store.holder(&a.holder)?, c, (r.next() % 100) as f64 / 100.0));
            }
        }
        let (ms, _) = time(|| store.adjust_batch(&View::main(), &changes))?;
        Ok(Sample { ms, ids: None })
    })
}

fn file_size(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let town = ctx.town(days)?;
    let copy = ctx.fresh("town-novectors");
    prepared(0, move |_| {
        std::fs::copy(&town, &copy).map_err(crate::Error::io("copying the town"))?;
        let s = Store::open(&copy)?;
        s.drop_vectors_and_compact()?;
        drop(s);
        let bytes = std::fs::metadata(&copy)
            .map_err(crate::Error::io("reading the town's size"))?
            .len();
        Ok(Sample {
            ms: bytes as f64 / (1024.0 * 1024.0),
            ids: None,
        })
    })
}

fn narrator_rss(ctx: &mut Ctx, days: usize) -> Result<Prepared> {
    let store = Store::open(ctx.town(days)?)?;
    prepared(0, move |_| {
        // Everything the claim side keeps: the index and every holder's codes.
        store.preload_claims()?;
        let q = Rng::new(3).vector();
        store.nearest_claims(Reader::Narrator, &View::main(), &q, 20, false)?;
        Ok(Sample {
            ms: crate::bench::machine::resident_mib().unwrap_or(f64::NAN),
            ids: None,
        })
    })
}
