//! Never lose a word: a dictation killed with SIGKILL mid-recording is on disk, and the next
//! start turns it into a draft (the CLI saves it as a memory); a damaged spool is reported and set aside, not fatal.
//! (Own process: it points ALSA at a file microphone through `$XDG_CONFIG_HOME`.)

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use umwelt::speech::spool::{self, SpoolWriter};
use umwelt::speech::{DictationDrafts, Ears};
use umwelt::Store;

use crate::common;

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_umwelt-cli"))
}

#[test]
fn a_killed_dictation_is_recovered_at_the_next_start() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let raw = common::espeak_raw(
        "remember to call the dentist about the appointment on Thursday",
        dir.path(),
        0.3,
        0.5,
    );
    // A file microphone: ALSA reads it far faster than real time (and zeros past its end), so
    // the test waits for the sentence to be on disk rather than for the clock.
    common::file_microphone(dir.path(), &raw);
    let recordings = dir.path().join("recordings");
    let db = dir.path().join("m.sqlite");
    let speech_secs = std::fs::metadata(&raw).unwrap().len() as f64 / 32_000.0;

    // Record with no end, and kill it without warning once the speech is on disk.
    let mut child = cli()
        .env("XDG_CONFIG_HOME", dir.path())
        .arg("--db")
        .arg(&db)
        .arg("record")
        .arg("--recordings")
        .arg(&recordings)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // The spool being written (`spool::unfinished` leaves out spools still locked by a recorder).
    let spool_secs = || {
        std::fs::read_dir(&recordings)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == spool::EXT))
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len().saturating_sub(16) as f64 / 32_000.0)
            .unwrap_or(0.0)
    };
    while spool_secs() < speech_secs && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(
        spool::unfinished(&recordings).is_empty(),
        "a spool being recorded must not count as left over"
    );
    eprintln!(
        "killing after {:.2} s on disk ({:?})",
        spool_secs(),
        t0.elapsed()
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        spool_secs() >= speech_secs,
        "only {:.2} s of {speech_secs:.2} s reached the disk",
        spool_secs()
    );

    // A second, damaged spool: reported and set aside, the good one still recovered.
    std::fs::write(recordings.join("1.spool"), b"not a recording at all").unwrap();

    let out = cli()
        .arg("--db")
        .arg(&db)
        .arg("recover")
        .arg("--recordings")
        .arg(&recordings)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let words = common::words(&stdout);
    for w in ["dentist", "thursday"] {
        assert!(
            words.contains(&w.to_string()),
            "recovered {stdout:?} ({stderr})"
        );
    }
    assert!(stderr.contains("damaged"), "{stderr}");
    assert!(recordings.join("1.spool.damaged").exists());
    assert!(spool::unfinished(&recordings).is_empty());
    // The memory is in the store, with its recording kept as a WAV file.
    let store = Store::open(&db).unwrap();
    let list = store.list(umwelt::store::DEFAULT_SCOPE, 10, None).unwrap();
    assert_eq!(list.len(), 1);
    assert!(std::path::Path::new(list[0].audio_path.as_ref().unwrap()).exists());
    // What the CLI made is private from other users, whatever the caller's umask: the memory
    // file with its log, the recordings folder and every recording in it (the damaged spool is
    // the test's own file).
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&recordings), 0o700);
    let mut made = vec![db.clone(), db.with_extension("sqlite-wal")];
    made.extend(
        std::fs::read_dir(&recordings)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.ends_with("1.spool.damaged")),
    );
    for p in made.iter().filter(|p| p.exists()) {
        assert_eq!(mode(p), 0o600, "{} is readable by others", p.display());
    }
}

#[test]
fn a_spool_cut_mid_sample_is_still_transcribed() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("say.wav");
    common::espeak_wav("buy fresh bread and milk", &wav);
    let pcm = umwelt::audio::read_wav_16k_mono(&wav).unwrap();
    let recordings = dir.path().join("recordings");
    let mut w =
        SpoolWriter::create(&recordings, 16_000, umwelt::sealed::Seal::for_tests()).unwrap();
    for chunk in pcm.chunks(4_000) {
        w.append(chunk).unwrap();
    }
    let path = w.path().to_path_buf();
    drop(w);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&[1])
        .unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let r = DictationDrafts::new(&recordings).recover(&Ears::load, &store);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert!(r.recovered[0].problem.is_none(), "{:?}", r.recovered[0]);
    assert_eq!(r.recovered.len(), 1);
    assert!(
        common::words(&r.recovered[0].text).contains(&"milk".to_string()),
        "{}",
        r.recovered[0].text
    );
}

/// The speech models load at start only when a recording needs them: a folder with nothing to
/// transcribe never calls the loader; one whose loader fails keeps its spool as it was (not
/// set aside as damaged) for the next start, and says why once.
#[test]
fn recovery_loads_whisper_only_for_a_recording_and_keeps_it_when_loading_fails() {
    let dir = tempfile::tempdir().unwrap();
    let recordings = dir.path().join("recordings");
    std::fs::create_dir_all(&recordings).unwrap();
    std::fs::write(recordings.join("7.wav.part"), b"half a file").unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let calls = std::cell::Cell::new(0);
    let failing = || -> umwelt::Result<Ears> {
        calls.set(calls.get() + 1);
        Err(umwelt::Error::NotFound("the whisper model (a test)".into()))
    };
    let r = DictationDrafts::new(&recordings).recover(&failing, &store);
    assert_eq!(calls.get(), 0, "nothing needed transcribing");
    assert!(r.problems.is_empty() && r.recovered.is_empty(), "{r:?}");
    assert!(!recordings.join("7.wav.part").exists());

    for _ in 0..2 {
        let mut w =
            SpoolWriter::create(&recordings, 16_000, umwelt::sealed::Seal::for_tests()).unwrap();
        w.append(&vec![0.1; 16_000]).unwrap();
    }
    let spools = spool::unfinished(&recordings);
    assert_eq!(spools.len(), 2);
    let r = DictationDrafts::new(&recordings).recover(&failing, &store);
    assert_eq!(calls.get(), 1, "tried once for both");
    assert!(r.recovered.is_empty(), "{r:?}");
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(
        r.problems[0].contains("loading the speech models"),
        "{:?}",
        r.problems
    );
    assert_eq!(
        spool::unfinished(&recordings),
        spools,
        "the spools wait for the next start"
    );
}
