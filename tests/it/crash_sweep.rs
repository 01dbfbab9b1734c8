//! Kill the whole way from the microphone to a memory: `umwelt-cli record` (record → stop → WAV
//! → draft → save → memory) is killed with SIGKILL at each named crash point
//! (`umwelt::crashpoint::POINTS`, several times at the spool's chunks) and at times spread
//! over its run; after each kill, `umwelt-cli recover` is the next start. Afterwards there is
//! exactly one draft or one memory for the recording (none if the kill came before any audio
//! reached the disk), and no file that belongs to neither.
//!
//! `UMWELT_CRASH_KILLS` sets how many kills (default 40, which CI runs; the recorded run in
//! docs/RELIABILITY.md used 240).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use umwelt::speech::DictationDrafts;
use umwelt::Store;

use crate::common;

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_umwelt-cli"))
}

/// What a kill left: whether any audio (or anything made from it) was on disk.
fn anything_recorded(recordings: &Path, db: &Path) -> bool {
    let on_disk = std::fs::read_dir(recordings)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let len = e.metadata().map(|m| m.len()).unwrap_or(0);
            (name.ends_with(".spool") && len > 16 + 2)
                || name.ends_with(".wav")
                || name.ends_with(".draft.json")
        });
    on_disk || memories(db) > 0
}

fn memories(db: &Path) -> usize {
    if !db.exists() {
        return 0;
    }
    Store::open(db)
        .unwrap()
        .list(umwelt::store::DEFAULT_SCOPE, 10, None)
        .unwrap()
        .len()
}

#[test]
fn a_kill_at_any_step_leaves_exactly_one_draft_or_memory() {
    let _process = common::shared();
    let kills: usize = std::env::var("UMWELT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().unwrap();
    let raw = common::espeak_raw(
        "buy fresh bread and milk on the way home",
        dir.path(),
        0.2,
        0.3,
    );
    common::file_microphone(dir.path(), &raw);
    let record = |k: usize, crash_at: Option<&str>| {
        let here = dir.path().join(format!("k{k}"));
        let mut c = cli();
        c.env("XDG_CONFIG_HOME", dir.path())
            .arg("--db")
            .arg(here.join("m.sqlite"))
            .args(["record", "--seconds", "2.5", "--recordings"])
            .arg(here.join("recordings"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(p) = crash_at {
            c.env(umwelt::crashpoint::ENV, p);
        }
        (here, c.spawn().unwrap())
    };

    // Runs to the end: how long a whole one takes (the random kills fall inside it). The
    // shortest of three: the first pays for reading the models from disk, and other tests may
    // be busy meanwhile.
    let mut whole = Duration::MAX;
    for warm in 0..3 {
        let t0 = Instant::now();
        let (here, mut child) = record(1000 + warm, None);
        assert!(child.wait().unwrap().success());
        whole = whole.min(t0.elapsed());
        assert_eq!(memories(&here.join("m.sqlite")), 1);
    }

    // Each named point (the spool's first chunk: the file microphone runs faster than real time, so
    // the kills at spread times cover the rest of the recording), then times spread over a run.
    // A spread time is a fraction of a whole run. A run that ends before its kill (the machine
    // got quieter than when `whole` was measured) shortens `whole` to what it took and is tried
    // again, at most as many times as there are spread times.
    let mut plan: std::collections::VecDeque<(Option<String>, f64)> = Default::default();
    for p in umwelt::crashpoint::POINTS {
        if *p == "spool.chunk" {
            plan.push_back((Some(format!("{p}#1")), 0.0));
        } else {
            plan.push_back((Some(p.to_string()), 0.0));
        }
    }
    let named = plan.len();
    let random = kills.saturating_sub(named).max(1);
    for i in 1..=kills.saturating_sub(named) {
        plan.push_back((None, i as f64 / random as f64 * 0.95));
    }
    let planned = plan.len();
    let mut retries = random;
    let (mut killed, mut lost, mut finished) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut k = 0;
    while let Some((point, fraction)) = plan.pop_front() {
        k += 1;
        let started = Instant::now();
        let (here, mut child) = record(k, point.as_deref());
        let status = match point {
            Some(_) => child.wait().unwrap(),
            None => {
                // Spread over the whole run, from the process's start to its end.
                let at = whole.mul_f64(fraction);
                let t = Instant::now();
                loop {
                    if let Some(st) = child.try_wait().unwrap() {
                        break st;
                    }
                    if t.elapsed() >= at {
                        child.kill().unwrap();
                        break child.wait().unwrap();
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        };
        let recordings = here.join("recordings");
        let db = here.join("m.sqlite");
        if status.success() {
            finished += 1;
            eprintln!("kill {k} ({point:?}): the run ended first");
            if point.is_none() && retries > 0 {
                retries -= 1;
                whole = whole.min(started.elapsed());
                plan.push_back((None, fraction));
            }
        } else {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                status.signal(),
                Some(9),
                "kill {k} ({point:?}) ended otherwise: {status}"
            );
            killed += 1;
        }
        let expect = usize::from(anything_recorded(&recordings, &db));

        // The next start.
        let out = cli()
            .arg("--db")
            .arg(&db)
            .args(["recover", "--recordings"])
            .arg(&recordings)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            failures.push(format!("kill {k} ({point:?}): recover failed: {stderr}"));
            continue;
        }
        let drafts = DictationDrafts::new(&recordings).drafts();
        let n_memories = memories(&db);
        let found = drafts.len() + n_memories;
        if found < expect {
            lost += 1;
        }
        if found != expect {
            failures.push(format!(
                "kill {k} ({point:?}): {} drafts and {n_memories} memories, expected {expect}",
                drafts.len()
            ));
        }
        // Nothing left that belongs to neither: the only files are the drafts and the WAVs of
        // drafts and memories.
        let mut kept: Vec<String> = drafts
            .iter()
            .flat_map(|d| [format!("{}.draft.json", d.id), file_name(&d.audio_path)])
            .collect();
        if n_memories == 1 {
            let store = Store::open(&db).unwrap();
            let m = &store.list(umwelt::store::DEFAULT_SCOPE, 1, None).unwrap()[0];
            kept.extend(m.audio_path.as_deref().map(file_name));
        }
        for e in std::fs::read_dir(&recordings)
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if !kept.contains(&name) {
                failures.push(format!("kill {k} ({point:?}): {name} left over"));
            }
        }
    }
    eprintln!(
        "crash sweep: {planned} kill points planned ({named} named, {random} at spread times), {k} runs, {killed} killed, {finished} ran to the end first, {lost} recordings lost"
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(lost, 0);
    assert!(killed >= planned / 2, "only {killed} kills landed");
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
