//! Two writers on one file: the app and `umwelt-cli`, or two CLI processes, remember, delete and
//! recall on the same memory file at the same time. Every write waits its turn (nothing fails
//! with "database is locked"), and a process's memory-resident index sees what the others wrote
//! before it answers.
//!
//! The processes are real: children of this test binary (each running the library on the file,
//! so 500 notes cost one model load, not 500) and `umwelt-cli`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use umwelt::embed::LazyEmbedder;
use umwelt::Store;

use crate::common;

/// Tells a child of this binary which part of [`two_processes_write_one_file_at_once`] it plays:
/// `write <n> <db>` or `recall <db> <stop file>`.
const ROLE: &str = "UMWELT_TEST_WRITERS_ROLE";
/// Notes each writer keeps.
const NOTES: usize = 500;
/// Every this many notes, a writer also remembers a note and deletes it again.
const DELETE_EVERY: usize = 10;
const TOPICS: [&str; 8] = [
    "buy milk, eggs and bread at the corner shop",
    "the dentist moved the appointment to Thursday morning",
    "water the tomatoes in the garden before the heat",
    "the wifi password at the cabin is on the fridge",
    "call mum about the holiday plans in August",
    "the car needs new tyres before winter",
    "return the library books by Friday",
    "the plumber comes on Monday between eight and ten",
];
const QUERIES: [&str; 4] = [
    "what did I need from the shop?",
    "when do I see the dentist?",
    "how do I get online at the cabin?",
    "what does the car need?",
];

fn note(writer: usize, i: usize) -> String {
    format!(
        "writer {writer} note {i}: {}",
        TOPICS[(i + writer) % TOPICS.len()]
    )
}

fn cli(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_umwelt-cli"));
    c.arg("--db").arg(db);
    c
}

/// Run `args` with `umwelt-cli` on `db`; its stdout, trimmed.
fn run_cli(db: &Path, args: &[&str]) -> String {
    let out = cli(db).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "umwelt-cli {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A writer: `NOTES` notes kept, and every `DELETE_EVERY`th a note remembered and deleted.
/// Writer 0 opens the file for every note, as `umwelt-cli remember` does (opening, and closing
/// the last connection, take locks of their own); writer 1 keeps it open, as the app does.
fn writer(n: usize, db: &Path) {
    let embedder = Arc::new(LazyEmbedder::new());
    let mut store = Store::open_with(db, embedder.clone()).unwrap();
    for i in 0..NOTES {
        if n == 0 {
            drop(store);
            store = Store::open_with(db, embedder.clone())
                .unwrap_or_else(|e| panic!("writer {n}, opening for note {i}: {e}"));
        }
        store
            .remember("me", &format!("w{n}"), &note(n, i))
            .unwrap_or_else(|e| panic!("writer {n}, note {i}: {e}"));
        if i % DELETE_EVERY == 0 {
            let id = store
                .remember("me", "doomed", &format!("writer {n} doomed {i}"))
                .unwrap_or_else(|e| panic!("writer {n}, doomed note {i}: {e}"));
            store
                .delete(id)
                .unwrap_or_else(|e| panic!("writer {n}, deleting {id}: {e}"));
        }
    }
}

/// A reader: recalls on one store (so through its cached index) until `stop` exists.
fn reader(db: &Path, stop: &Path) {
    let store = Store::open(db).unwrap();
    let t0 = Instant::now();
    let (mut recalls, mut found, mut first) = (0, 0, None);
    while !stop.exists() && t0.elapsed() < Duration::from_secs(120) {
        let q = QUERIES[recalls % QUERIES.len()];
        let hits = store
            .recall(q, "me", None, 10)
            .unwrap_or_else(|e| panic!("recall {recalls} ({q:?}): {e}"));
        found += hits.len();
        if hits.is_empty() {
            // Nobody has written yet: no model run, so do not spin.
            std::thread::sleep(Duration::from_millis(2));
        } else if first.is_none() {
            first = Some(t0.elapsed());
        }
        store
            .count("me")
            .unwrap_or_else(|e| panic!("count after recall {recalls}: {e}"));
        recalls += 1;
    }
    println!("reader: {recalls} recalls, {found} hits, the first after {first:?}");
    assert!(recalls > 0 && found > 0, "the reader never found anything");
}

fn spawn_role(role: &str) -> Child {
    // libtest names a test by its path without the crate's name.
    let module = module_path!().split_once("::").unwrap().1;
    Command::new(std::env::current_exe().unwrap())
        .args([
            &format!("{module}::two_processes_write_one_file_at_once"),
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(ROLE, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn assert_passed(what: &str, out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn two_processes_write_one_file_at_once() {
    if let Ok(role) = std::env::var(ROLE) {
        let args: Vec<&str> = role.splitn(3, ' ').collect();
        match args[..] {
            ["write", n, db] => writer(n.parse().unwrap(), Path::new(db)),
            ["recall", db, stop] => reader(Path::new(db), Path::new(stop)),
            _ => panic!("unknown role {role:?}"),
        }
        return;
    }
    let _process = common::shared();
    let (dir, db) = common::temp_db();
    let stop = dir.path().join("stop");
    let t0 = Instant::now();
    let writers: Vec<Child> = (0..2)
        .map(|n| spawn_role(&format!("write {n} {}", db.display())))
        .collect();
    let reader = spawn_role(&format!("recall {} {}", db.display(), stop.display()));
    let outs: Vec<Output> = writers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    std::fs::write(&stop, b"").unwrap();
    let read = reader.wait_with_output().unwrap();
    eprintln!("two writers and a reader: {:?}", t0.elapsed());
    for (n, out) in outs.iter().enumerate() {
        assert_passed(&format!("writer {n}"), out);
    }
    assert_passed("reader", &read);
    print!("{}", String::from_utf8_lossy(&read.stdout));

    let store = Store::open(&db).unwrap();
    assert_eq!(store.count("me").unwrap(), 2 * NOTES);
    let have: BTreeSet<String> = store
        .list("me", 10 * NOTES, None)
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    let want: BTreeSet<String> = (0..2)
        .flat_map(|n| (0..NOTES).map(move |i| note(n, i)))
        .collect();
    assert_eq!(have, want);
}

#[test]
fn a_recall_sees_what_another_process_deleted_and_added() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    for t in [
        "remember to buy milk",
        "the dentist appointment is on Tuesday at nine",
        "the wifi password at the cabin is written on the fridge",
    ] {
        store.remember("me", "", t).unwrap();
    }
    let shop = "what did I need from the shop?";
    // This recall loads the holder's vectors into memory (with the optimisations on).
    let hits = store.recall(shop, "me", None, 3).unwrap();
    assert_eq!(hits[0].memory.text, "remember to buy milk");
    let milk = hits[0].memory.id;

    // Another process deletes the top hit this one holds in memory.
    run_cli(&db, &["delete", &milk.to_string()]);
    let hits = store
        .recall(shop, "me", None, 3)
        .expect("a recall after another process deleted its top hit");
    assert!(
        hits.iter().all(|h| h.memory.id != milk),
        "the deleted memory came back: {hits:?}"
    );
    assert_eq!(hits.len(), 2);

    // And adds one: found here at once.
    let bread: i64 = run_cli(&db, &["remember", "buy bread and oat milk at the bakery"])
        .parse()
        .unwrap();
    let hits = store.recall(shop, "me", None, 3).unwrap();
    assert_eq!(
        hits[0].memory.id,
        bread,
        "{:?}",
        hits.iter().map(|h| &h.memory.text).collect::<Vec<_>>()
    );
    assert_eq!(store.count("me").unwrap(), 3);
}
