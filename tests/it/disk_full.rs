//! The disk fills up while dictating (here: a file size limit, `RLIMIT_FSIZE`, which fails a
//! write as a full disk does): within a second the recording says so and stops keeping audio in
//! memory, and stopping makes a draft of what reached the disk, heard and kept, without waiting
//! for a restart. Once there is room again, Retry makes its WAV, and it saves as a memory.
//! (Own process: the limit and ALSA's configuration are process-wide.)

use std::io::Write;
use std::time::{Duration, Instant};

use umwelt::speech::{DictationDrafts, Ears};

use crate::common;

/// The file size limit: 2 s of 16 kHz mono 16-bit audio, and the spool's header.
const LIMIT: u64 = 16 + 2 * 32_000;

fn set_file_size_limit(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on this process; SIGXFSZ ignored so a write past the limit
    // fails with EFBIG instead of killing the process.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

#[test]
fn a_full_disk_while_dictating_is_said_within_a_second_and_what_was_recorded_becomes_a_draft() {
    if common::own_process!() {
        return;
    }
    let ears = Ears::load().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let raw = common::espeak_raw(
        "buy fresh bread and milk on the way home tonight please",
        dir.path(),
        0.2,
        0.0,
    );
    let speech = std::fs::read(&raw).unwrap();
    let fifo = dir.path().join("mic.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    common::file_microphone(dir.path(), &fifo);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());
    // The microphone: the sentence at the pace of speech, then silence, until the test is done.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let writer_fifo = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_fifo)
            .unwrap();
        let t0 = Instant::now();
        let silence = vec![0u8; 3_200];
        for i in 0.. {
            let chunk = speech.chunks(3_200).nth(i).unwrap_or(&silence);
            if f.write_all(chunk).is_err() || done_rx.try_recv().is_ok() || i > 300 {
                break;
            }
            let due = Duration::from_millis(100 * (i as u64 + 1));
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    });

    let recordings = dir.path().join("recordings");
    let d = DictationDrafts::new(&recordings);
    set_file_size_limit(LIMIT);
    let live = d.start(None, &ears, |_| {}).unwrap();
    let t0 = Instant::now();
    let why = loop {
        if let Some(why) = live.lost() {
            break why;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the full disk was never noticed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    // The limit is reached when 2 s of audio have come in; it is said within a second of that.
    let noticed = t0.elapsed();
    assert!(why.contains("disk is full"), "{why}");
    assert!(
        noticed < Duration::from_secs(3),
        "noticed {noticed:?} after the start, more than a second after the disk filled (2 s)"
    );
    // Nothing more is kept in memory while the microphone goes on.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(live.pending_samples(), 0, "audio piles up in memory");

    // Stop at once (as the app does on `lost`): a draft of what reached the disk.
    let draft = d.stop(live).unwrap();
    // The writer may have ended already (the device closed the FIFO).
    done_tx.send(()).ok();
    writer.join().unwrap();
    eprintln!(
        "disk full: noticed {noticed:?} after the start (the limit is reached at 2 s of audio); the draft keeps {:.2} s as {}",
        draft.seconds, draft.audio_path
    );
    let problem = draft.problem.clone().unwrap_or_default();
    assert!(problem.contains("disk is full"), "{draft:?}");
    assert!(
        (1.5..=2.01).contains(&draft.seconds),
        "kept {} s of the 2 s that fit",
        draft.seconds
    );
    assert!(std::path::Path::new(&draft.audio_path).exists());
    let words = common::words(&draft.text);
    assert!(
        words.contains(&"milk".to_string()),
        "heard {:?}",
        draft.text
    );
    assert_eq!(d.drafts(), vec![draft.clone()]);

    // Room again: Retry makes the WAV (if the stop could not), and the draft saves.
    set_file_size_limit(libc::RLIM_INFINITY);
    let retried = d.retry(&draft.id, &ears).unwrap();
    assert!(retried.audio_path.ends_with(".wav"), "{retried:?}");
    let seconds = umwelt::audio::read_wav_16k_mono(std::path::Path::new(&retried.audio_path))
        .unwrap()
        .len() as f32
        / 16_000.0;
    assert!((seconds - draft.seconds).abs() < 0.05, "{seconds} s");
    let store = umwelt::Store::open(dir.path().join("m.sqlite")).unwrap();
    let m = d
        .save(&retried.id, &retried.text, &store, "me", "")
        .unwrap();
    assert_eq!(m.audio_path.as_deref(), Some(retried.audio_path.as_str()));
    let left: Vec<_> = std::fs::read_dir(&recordings)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "only the memory's WAV is left: {left:?}");
}

/// A memory's vector in [`a_full_disk_brings_a_large_index_back_into_memory_and_recall_answers`].
fn vector(i: usize) -> Vec<f32> {
    umwelt::bench::corpus::Rng::new(i as u64 + 1).vector()
}

/// The first hit of recalling memory `i`'s own vector (across every session) is memory `i`.
fn finds_itself(store: &umwelt::store::Store, i: usize, text: &str) {
    let hits = store
        .recall_vector(&vector(i), "big", None, 10, umwelt::clock::now_ms())
        .unwrap();
    assert_eq!(hits[0].memory.text, text, "recalling memory {i}");
    assert!((hits[0].similarity - 1.0).abs() < 1e-5);
}

/// An index large enough to keep its f32 vectors in a side file, opened when the side file
/// cannot grow (a file size limit fails its writes as a full disk does): the vectors come back
/// into memory, and recall, and remembering, go on as before.
#[test]
fn a_full_disk_brings_a_large_index_back_into_memory_and_recall_answers() {
    use umwelt::store::{NewMemory, Store, SPILL_FROM};
    if common::own_process!() {
        return;
    }
    let n = SPILL_FROM + 200;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memories.db");
    let texts: Vec<String> = (0..n).map(|i| format!("note {i}")).collect();
    {
        let store = Store::open(&path).unwrap();
        let vectors: Vec<Vec<f32>> = (0..n).map(vector).collect();
        for start in (0..n).step_by(2_000) {
            let rows: Vec<(NewMemory, &[f32])> = (start..(start + 2_000).min(n))
                .map(|i| {
                    let m = NewMemory {
                        scope: "big",
                        session: if i % 2 == 0 { "even" } else { "odd" },
                        text: &texts[i],
                        ..Default::default()
                    };
                    (m, vectors[i].as_slice())
                })
                .collect();
            store.remember_batch(&rows).unwrap();
        }
        store.checkpoint().unwrap();
    }
    let f32_bytes = n * umwelt::embed::EMBED_DIM * 4;
    let optimised = umwelt::optimisations::enabled();

    // With room, the f32 vectors are in the side file: the index holds a small part of them.
    let store = Store::open(&path).unwrap();
    store.preload("big").unwrap();
    if optimised {
        assert!(
            store.index_bytes() < f32_bytes / 4,
            "{} bytes",
            store.index_bytes()
        );
    }
    for i in [0, 7, SPILL_FROM + 3, n - 1] {
        finds_itself(&store, i, &texts[i]);
    }
    let hits = store
        .recall_vector(&vector(8), "big", Some("even"), 10, umwelt::clock::now_ms())
        .unwrap();
    assert_eq!(hits[0].memory.text, texts[8]);
    assert!(hits.iter().all(|h| h.memory.session == "even") && hits.len() == 10);
    drop(store);

    // No file may grow past the side file's first part: the index loads, spills, fails to
    // write a row more, and takes its vectors back.
    set_file_size_limit((SPILL_FROM as u64 + 20) * umwelt::embed::EMBED_DIM as u64 * 4);
    let store = Store::open(&path).unwrap();
    store.preload("big").unwrap();
    if optimised {
        assert!(
            store.index_bytes() >= f32_bytes,
            "{} bytes",
            store.index_bytes()
        );
    }
    for i in [0, 7, SPILL_FROM + 3, n - 1] {
        finds_itself(&store, i, &texts[i]);
    }
    let hits = store
        .recall_vector(&vector(8), "big", Some("even"), 10, umwelt::clock::now_ms())
        .unwrap();
    assert_eq!(hits[0].memory.text, texts[8]);
    assert!(hits.iter().all(|h| h.memory.session == "even"));
    let late = "remembered with the disk full";
    let v = vector(n);
    store
        .remember_batch(&[(
            NewMemory {
                scope: "big",
                session: "odd",
                text: late,
                ..Default::default()
            },
            v.as_slice(),
        )])
        .unwrap();
    finds_itself(&store, n, late);
}
