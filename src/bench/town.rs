//! The town: the second seed's generated world, to measure who-holds-what on.
//!
//! 40 holders over up to 3 360 days, one day per tick. Each day adds 100 authored holdings
//! (through `commit_batch`) and 50 tellings (through `transmit_batch`); every claim gets a
//! vector (`embedding_put`, random unit vectors: the model is not under test here). Seeded, on a
//! fixed clock, in a fresh file, so ids and times are the same every run. Unlike the seed's town
//! the texts vary (a small grammar), so full-text search means something; one word, "said", is
//! in most of them, the seed's worst case for a hybrid search.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::corpus::Rng;
use crate::error::{Error, Result};
use crate::store::holdings::{ClaimId, HolderId, Kind, NewClaim, Telling, View};
use crate::store::Store;

/// The full town's days.
pub const FULL_DAYS: usize = 3_360;
/// Its holders.
pub const HOLDERS: usize = 40;
/// Authored holdings a day.
pub const AUTHORED_PER_DAY: usize = 100;
/// Tellings a day.
pub const TELLINGS_PER_DAY: usize = 50;
/// The first day, 2020-01-01 (unix ms): the fixed clock.
pub const EPOCH_MS: i64 = 1_577_836_800_000;
pub const DAY_MS: i64 = 86_400_000;
/// The axis every authored holding stands on: the town's day.
pub const DAY_AXIS: &str = "day";
/// The word in most texts.
pub const COMMON_WORD: &str = "said";
/// What `embedding_put` records as the town's vectors' model.
pub const VECTOR_MODEL: &str = "random-unit";

const NAMES: [&str; HOLDERS] = [
    "Ada", "Bram", "Cleo", "Dov", "Edda", "Finn", "Greta", "Hugo", "Ines", "Jon", "Kira", "Lars",
    "Mira", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tilde", "Ugo", "Vera", "Wim",
    "Xenia", "Yves", "Zora", "Anton", "Britt", "Carl", "Dagny", "Emil", "Frida", "Gustav", "Hedda",
    "Ivar", "Juno", "Knut", "Lene", "Magnus", "Nora",
];
const PLACES: [&str; 16] = [
    "the mill",
    "the harbour",
    "the market",
    "the chapel",
    "the forge",
    "the inn",
    "the bakery",
    "the school",
    "the bridge",
    "the orchard",
    "the well",
    "the square",
    "the library",
    "the barn",
    "the lighthouse",
    "the station",
];
const THINGS: [&str; 16] = [
    "a gift",
    "a letter",
    "a ledger",
    "a lantern",
    "a key",
    "a boat",
    "a recipe",
    "a map",
    "a violin",
    "a debt",
    "a secret",
    "a goat",
    "a ring",
    "a quarrel",
    "a song",
    "a storm",
];
const VERBS: [&str; 12] = [
    "found", "lost", "sold", "mended", "hid", "borrowed", "promised", "painted", "carried",
    "weighed", "buried", "counted",
];
const WHEN: [&str; 8] = [
    "at dawn",
    "before noon",
    "after supper",
    "in the rain",
    "on market day",
    "at dusk",
    "during the feast",
    "late at night",
];
const OPINIONS: [&str; 8] = [
    "is not to be trusted",
    "deserves better",
    "works too hard",
    "talks too much",
    "was right all along",
    "should leave town",
    "has a good heart",
    "is hiding something",
];

/// The holder names, in id order.
pub fn holder_names() -> &'static [&'static str] {
    &NAMES
}

fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[(r.next() % xs.len() as u64) as usize]
}

/// One claim: text, kind, what it is about (the people and the place or thing named).
fn claim_text(r: &mut Rng, author: usize) -> (String, Kind, Vec<String>) {
    let who = pick(r, &NAMES);
    let other = pick(r, &NAMES);
    let place = pick(r, &PLACES);
    let thing = pick(r, &THINGS);
    let roll = r.next() % 100;
    if roll < 15 {
        let text = format!(
            "{} said that {other} {}.",
            NAMES[author],
            pick(r, &OPINIONS)
        );
        return (text, Kind::Opinion, vec![other.to_string()]);
    }
    let verb = pick(r, &VERBS);
    let when = pick(r, &WHEN);
    let (kind, body) = if roll < 55 {
        (
            Kind::Event,
            format!("{who} {verb} {thing} at {place} {when}"),
        )
    } else {
        (Kind::Fact, format!("{who} keeps {thing} near {place}"))
    };
    // Most texts are reported speech: the common word.
    let text = if r.next() % 100 < 90 {
        format!("{} said {body}.", NAMES[author])
    } else {
        format!("{body}.")
    };
    let thing_name = thing.trim_start_matches("a ").to_string();
    let place_name = place.trim_start_matches("the ").to_string();
    (text, kind, vec![who.to_string(), place_name, thing_name])
}

/// What was built.
#[derive(Debug, Clone, Copy, Default)]
pub struct TownStats {
    pub days: usize,
    pub claims: usize,
    pub holdings: usize,
    pub tellings_made: usize,
}

/// The town's holders, by name, in `store` (made if missing).
pub fn holders(store: &Store) -> Result<Vec<HolderId>> {
    NAMES.iter().map(|n| store.add_holder(n)).collect()
}

/// Build a town of `days` days into a new file at `path` (an existing file is refused: a town
/// never lands on someone's memories). `progress(days_done)` after each day; `cancel` stops
/// between days with [`Error::Cancelled`].
pub fn build_town(
    path: &Path,
    days: usize,
    seed: u64,
    progress: &mut dyn FnMut(usize),
    cancel: &AtomicBool,
) -> Result<TownStats> {
    if days == 0 || days > FULL_DAYS {
        return Err(Error::InvalidInput(format!(
            "a town has 1 to {FULL_DAYS} days, not {days}"
        )));
    }
    if path.exists() {
        return Err(Error::InvalidInput(format!(
            "{} already exists: a town is built into a new file only",
            path.display()
        )));
    }
    let store = Store::open(path)?;
    let ids = holders(&store)?;
    let mut r = Rng::new(seed);
    let mut stats = TownStats {
        days,
        ..Default::default()
    };
    // Recent holdings (holder index, claim): tellers are picked among them.
    let mut recent: Vec<(usize, ClaimId)> = Vec::new();
    for day in 0..days {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let t0 = EPOCH_MS + day as i64 * DAY_MS;
        let mut authors = Vec::with_capacity(AUTHORED_PER_DAY);
        let claims: Vec<NewClaim> = (0..AUTHORED_PER_DAY)
            .map(|i| {
                let author = (r.next() % HOLDERS as u64) as usize;
                authors.push(author);
                let (text, kind, about) = claim_text(&mut r, author);
                NewClaim {
                    holder: ids[author],
                    text,
                    kind,
                    about,
                    axes: vec![(DAY_AXIS.to_string(), day as i64)],
                    at: Some(t0 + i as i64 * 1_000),
                }
            })
            .collect();
        let made = store.commit_batch(&View::main(), &claims)?;
        let vectors: Vec<Vec<f32>> = made.iter().map(|_| r.vector()).collect();
        let rows: Vec<(ClaimId, &[f32])> = made
            .iter()
            .zip(&vectors)
            .map(|(id, v)| (*id, v.as_slice()))
            .collect();
        store.embedding_put(&rows, VECTOR_MODEL)?;
        recent.extend(authors.iter().copied().zip(made.iter().copied()));
        let keep = 20 * AUTHORED_PER_DAY;
        if recent.len() > keep {
            recent.drain(..recent.len() - keep);
        }
        let tellings: Vec<Telling> = (0..TELLINGS_PER_DAY)
            .map(|i| {
                let (from, claim) = recent[(r.next() % recent.len() as u64) as usize];
                let mut to = (r.next() % HOLDERS as u64) as usize;
                if to == from {
                    to = (to + 1) % HOLDERS;
                }
                Telling {
                    claim,
                    from: ids[from],
                    to: ids[to],
                    at: Some(t0 + 50_000_000 + i as i64 * 1_000),
                }
            })
            .collect();
        let told = store.transmit_batch(&View::main(), &tellings)?;
        // A listener holds what it was told (now, or already) and can pass it on.
        for t in &tellings {
            if let Some(to) = ids.iter().position(|&h| h == t.to) {
                recent.push((to, t.claim));
            }
        }
        stats.claims += made.len();
        stats.tellings_made += told.made;
        stats.holdings += made.len() + told.made;
        progress(day + 1);
    }
    store.checkpoint()?;
    Ok(stats)
}

/// How many days the town in `path` has (from its claims' times on the fixed clock; claims a
/// bench wrote later carry the real time).
pub fn days_of(path: &Path) -> Result<usize> {
    let conn = rusqlite::Connection::open(path)?;
    let last: Option<i64> = conn.query_row(
        "SELECT max(created_at) FROM claim WHERE created_at < ?1",
        [EPOCH_MS + FULL_DAYS as i64 * DAY_MS],
        |r| r.get(0),
    )?;
    last.map(|t| ((t - EPOCH_MS) / DAY_MS) as usize + 1)
        .ok_or_else(|| Error::InvalidInput(format!("{} is not a town", path.display())))
}

/// Copy the town at `from` to `to` (replaced), made durable and then dropped from the operating
/// system's page cache, so the first reads of the copy come from the disk: the seed's "fresh
/// copy". The town's log is checkpointed into it first.
pub fn cold_copy(from: &Path, to: &Path) -> Result<()> {
    Store::open(from)?.checkpoint()?;
    for end in ["", "-wal", "-shm"] {
        let mut p = to.as_os_str().to_owned();
        p.push(end);
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(format!("removing the old copy {}", to.display()))(e))
            }
            _ => {}
        }
    }
    let copy = || -> std::io::Result<()> {
        std::fs::copy(from, to)?;
        let f = std::fs::File::open(to)?;
        f.sync_all()?;
        drop_cached(&f);
        drop_cached(&std::fs::File::open(from)?);
        Ok(())
    };
    copy().map_err(Error::io(format!("copying the town to {}", to.display())))
}

/// Ask the OS to forget the file's cached pages (they are clean: the file was synced).
#[cfg(target_os = "linux")]
fn drop_cached(f: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; the call reads no memory of ours.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        tracing::warn!(
            "the OS would not drop the copy's cached pages ({r}): the run is warmer than asked"
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn drop_cached(_: &std::fs::File) {}
