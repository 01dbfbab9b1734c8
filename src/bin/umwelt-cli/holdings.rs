//! Who holds what from a terminal: holders, claims, tellings, witnessing, strengths, the reads,
//! drafts, claim search and the town. Holders are named; an unknown holder, claim, draft or
//! cursor exits 1 with one line saying so.

use std::sync::atomic::AtomicBool;

use umwelt::store::holdings::{Kind, Listing, NewClaim, Reader, Telling, View};
use umwelt::store::Store;
use umwelt::{Error, Result};

use crate::args::{
    AdjustArgs, ClaimAddArgs, HoldingsArgs, HoldsArgs, MemoryFile, SearchArgs, TellArgs, TownArgs,
    WhoHoldsArgs, WitnessArgs,
};
use crate::memory::{open, print_json};

fn view(draft: Option<i64>, axis: Option<(String, i64)>) -> View {
    let v = View { draft, axis: None };
    match axis {
        Some((name, pos)) => v.as_of(&name, pos),
        None => v,
    }
}

pub(crate) fn holder_add(db: &MemoryFile, name: &str) -> Result<()> {
    println!("{}", open(db)?.add_holder(name)?);
    Ok(())
}

pub(crate) fn claim_add(db: &MemoryFile, a: ClaimAddArgs) -> Result<()> {
    let store = open(db)?;
    let holder = store.holder(&a.holder)?;
    // A claim has one vector: embedded before anything is written, so a missing model leaves
    // the file as it was.
    let vector = store.embedder().get()?.embed_one(a.text.trim())?;
    let id = store.commit(
        &view(a.draft, None),
        NewClaim {
            holder,
            text: a.text,
            kind: Kind::parse(&a.kind)?,
            about: a.about,
            axes: a.axis,
            at: None,
        },
    )?;
    store.embedding_put(&[(id, vector.as_slice())], umwelt::embed::EMBED_MODEL_ID)?;
    println!("{id}");
    Ok(())
}

pub(crate) fn tell(db: &MemoryFile, a: TellArgs) -> Result<()> {
    let store = open(db)?;
    let t = Telling {
        claim: a.claim,
        from: store.holder(&a.from)?,
        to: store.holder(&a.to)?,
        at: None,
    };
    let w = store.transmit_batch(&view(a.draft, None), &[t])?;
    if w.already_held > 0 {
        eprintln!(
            "{} already held claim {}; its holding is unchanged",
            a.to, a.claim
        );
    }
    Ok(())
}

pub(crate) fn witness(db: &MemoryFile, a: WitnessArgs) -> Result<()> {
    let store = open(db)?;
    let holders = a
        .holders
        .iter()
        .map(|h| store.holder(h.trim()))
        .collect::<Result<Vec<_>>>()?;
    let w = store.witness(&view(a.draft, None), &[a.claim], &holders, None)?;
    eprintln!("{} witnessed; {} already held it", w.made, w.already_held);
    Ok(())
}

pub(crate) fn adjust(db: &MemoryFile, a: AdjustArgs) -> Result<()> {
    let store = open(db)?;
    let holder = store.holder(&a.holder)?;
    store.adjust_batch(&view(a.draft, None), &[(holder, a.claim, a.strength)])?;
    Ok(())
}

pub(crate) fn holds(db: &MemoryFile, a: HoldsArgs) -> Result<()> {
    let store = open(db)?;
    let holder = store.holder(&a.holder)?;
    println!("{}", store.holds(&view(a.draft, a.axis), holder, a.claim)?);
    Ok(())
}

pub(crate) fn who_holds(db: &MemoryFile, a: WhoHoldsArgs) -> Result<()> {
    let who = open(db)?.who_holds(&view(a.draft, a.axis), a.claim)?;
    if a.json {
        print_json(&who);
    } else {
        for h in who {
            let from = h.from.map(|f| format!(" by {f}")).unwrap_or_default();
            println!(
                "{} ({}{from}, since {}, strength {})",
                h.holder,
                h.how.as_str(),
                h.since,
                h.strength
            );
        }
    }
    Ok(())
}

pub(crate) fn holdings(db: &MemoryFile, a: HoldingsArgs) -> Result<()> {
    let store = open(db)?;
    let listing = match (&a.holder, a.about) {
        (Some(h), _) => Listing::Holder(store.holder(h)?),
        (None, Some(e)) => Listing::About(e),
        (None, None) => unreachable!("clap requires --holder or --about"),
    };
    let page = store.holdings(
        &listing,
        &view(a.draft, a.axis),
        a.limit,
        a.cursor.as_deref(),
    )?;
    if a.json {
        print_json(&page);
    } else {
        for h in &page.holdings {
            let from = h
                .from
                .as_ref()
                .map(|f| format!(" by {f}"))
                .unwrap_or_default();
            println!(
                "[{}] {} ({}{from}): {}",
                h.claim,
                h.holder,
                h.how.as_str(),
                h.text
            );
        }
        if let Some(n) = page.next {
            println!("next: --cursor {n}");
        }
    }
    Ok(())
}

pub(crate) fn draft_open(db: &MemoryFile, parent: Option<i64>) -> Result<()> {
    println!("{}", open(db)?.open_draft(parent)?);
    Ok(())
}

pub(crate) fn draft_merge(db: &MemoryFile, draft: i64) -> Result<()> {
    open(db)?.merge_draft(draft)
}

pub(crate) fn draft_discard(db: &MemoryFile, draft: i64) -> Result<()> {
    open(db)?.discard_draft(draft)
}

/// `search --holder H | --narrator`: the claims the reader sees, by words and meaning.
pub(crate) fn search(db: &MemoryFile, a: SearchArgs) -> Result<()> {
    let store = open(db)?;
    let reader = match &a.holder {
        Some(h) => Reader::Holder(store.holder(h)?),
        None => Reader::Narrator,
    };
    let hits = store.search_claims(reader, &view(a.draft, None), &a.query, None, a.k)?;
    if a.json {
        if a.explain {
            print_json(&hits);
        } else {
            let plain: Vec<_> = hits
                .iter()
                .map(|h| serde_json::json!({"claim": h.claim, "text": h.text, "kind": h.kind, "score": h.score}))
                .collect();
            print_json(&plain);
        }
        return Ok(());
    }
    for h in hits {
        println!("{:.4}  [{}] {}", h.score, h.claim, h.text);
        if a.explain {
            let r = |x: Option<u32>| x.map_or("—".to_string(), |x| x.to_string());
            println!(
                "        keyword rank {} (bm25 {}); meaning rank {} (similarity {})",
                r(h.why.keyword_rank),
                h.why.bm25.map_or("—".into(), |b| format!("{b:.2}")),
                r(h.why.meaning_rank),
                h.why.similarity.map_or("—".into(), |s| format!("{s:.3}")),
            );
        }
    }
    Ok(())
}

pub(crate) fn town(db: &MemoryFile, a: TownArgs) -> Result<()> {
    let (Some(path), None) = (db.db.clone(), &db.passphrase_file) else {
        return Err(Error::InvalidInput(
            "give the town its own plain file with --db FILE and no passphrase (a town never goes into your memories)"
                .into(),
        ));
    };
    let t0 = std::time::Instant::now();
    let stats = umwelt::bench::town::build_town(
        &path,
        a.days,
        a.seed,
        &mut |d| {
            if d % 100 == 0 {
                eprintln!("day {d} of {}", a.days);
            }
        },
        &AtomicBool::new(false),
    )?;
    eprintln!(
        "{} days, {} claims, {} holdings in {} ({:.1} s)",
        stats.days,
        stats.claims,
        stats.holdings,
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    let _ = Store::open(&path)?;
    Ok(())
}
