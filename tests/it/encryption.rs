//! The memory file encrypted at rest (SQLCipher): unreadable without its key, to `sqlite3` and
//! to `strings` (the file and its write-ahead log); a wrong key or no key refused with nothing
//! changed; a plain file encrypted in place and made plain again, with a kill at every step of
//! the conversion losing nothing; a conversion refused while another program has the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use umwelt::embed::{LazyEmbedder, EMBED_DIM};
use umwelt::store::cipher::{FileState, Key};
use umwelt::store::{conversion, NewMemory, DEFAULT_SCOPE};
use umwelt::Store;

use crate::common;

const SECRET: &str = "the safe code is kumquat seven nine";

/// `umwelt-cli` on `db`: plain unless given a passphrase, even when the suite runs on
/// encrypted files (these tests are about which is which).
fn cli(db: &Path, pass: Option<&Path>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_umwelt-cli"));
    c.env_remove(umwelt::store::cipher::TEST_ENV);
    c.arg("--db").arg(db);
    if let Some(p) = pass {
        c.arg("--passphrase-file").arg(p);
    }
    c
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn failed(out: Output, what: &str) -> String {
    assert!(!out.status.success(), "{what} should have failed");
    String::from_utf8(out.stderr).unwrap()
}

fn passphrase(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{text}\n")).unwrap();
    p
}

/// What `strings` finds in a file, or "" if it is absent.
fn strings(path: &Path) -> String {
    if !path.exists() {
        return String::new();
    }
    let out = Command::new("strings")
        .arg("-n")
        .arg("4")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[test]
fn an_encrypted_file_opens_only_with_its_key_and_shows_nothing_without_it() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let pass = passphrase(dir.path(), "pass", "correct horse battery staple");
    let wrong = passphrase(dir.path(), "wrong", "correct horse battery stapler");

    ok(
        cli(&db, Some(&pass))
            .args(["remember", SECRET])
            .output()
            .unwrap(),
        "remember",
    );
    assert_eq!(FileState::of(&db).unwrap(), FileState::Encrypted);
    let found = ok(
        cli(&db, Some(&pass))
            .args(["search", "kumquat"])
            .output()
            .unwrap(),
        "search with the key",
    );
    assert!(found.contains(SECRET), "{found}");

    // sqlite3 itself cannot read it, and no text is in the file.
    let out = Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT count(*) FROM sqlite_master")
        .output()
        .unwrap();
    let e = failed(out, "sqlite3 on the encrypted file");
    assert!(e.contains("file is not a database"), "{e}");
    for word in ["kumquat", "safe code", "claim", "CREATE TABLE"] {
        assert!(
            !strings(&db).contains(word),
            "{word} is readable in the file"
        );
    }

    // No key, a wrong key: refused, and the file is byte for byte what it was.
    let before = bytes(&db);
    let e = failed(
        cli(&db, None).args(["list"]).output().unwrap(),
        "list without a key",
    );
    assert!(
        e.contains("is encrypted") && e.contains("--passphrase-file"),
        "{e}"
    );
    let e = failed(
        cli(&db, Some(&wrong))
            .args(["remember", "more"])
            .output()
            .unwrap(),
        "remember with a wrong key",
    );
    assert!(
        e.contains("could not be opened with this key") && e.contains("Nothing was changed"),
        "{e}"
    );
    assert!(
        !e.contains("staple"),
        "the passphrase is in the message: {e}"
    );
    assert_eq!(bytes(&db), before, "a refused open changed the file");
    assert!(!with_suffix(&db, "-wal").exists() || bytes(&with_suffix(&db, "-wal")).is_empty());

    // A key given for a plain file is refused too, and says what to do.
    let plain = dir.path().join("plain.sqlite");
    ok(
        cli(&plain, None)
            .args(["remember", "plain words"])
            .output()
            .unwrap(),
        "plain remember",
    );
    let e = failed(
        cli(&plain, Some(&pass)).args(["list"]).output().unwrap(),
        "key on plain",
    );
    assert!(
        e.contains("is not encrypted") && e.contains("umwelt-cli encrypt"),
        "{e}"
    );
}

#[test]
fn the_write_ahead_log_of_an_encrypted_file_holds_no_text() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let key = Key::random().unwrap();
    let store = Store::open_keyed(&db, embedder(), Some(&key)).unwrap();
    assert!(store.is_encrypted());
    store.remember(DEFAULT_SCOPE, "s", SECRET).unwrap();
    // Written to the log, not yet to the file: read the log while the store is open.
    let wal = with_suffix(&db, "-wal");
    assert!(bytes(&wal).len() > 4096, "the write should be in the log");
    assert!(!strings(&wal).contains("kumquat"), "text in the log");
    let hits = store
        .recall("what is the safe code?", DEFAULT_SCOPE, None, 1)
        .unwrap();
    assert_eq!(hits[0].memory.text, SECRET);
    drop(store);
    // Opened again with the same random key (as the keyring gives it back), and not without.
    let again = Key::from_bytes(key.random_bytes().unwrap()).unwrap();
    let store = Store::open_keyed(&db, embedder(), Some(&again)).unwrap();
    assert_eq!(store.count(DEFAULT_SCOPE).unwrap(), 1);
    drop(store);
    let e = Store::open_keyed(&db, embedder(), None)
        .err()
        .expect("no key")
        .to_string();
    assert!(e.contains("is encrypted"), "{e}");
    let other = Key::random().unwrap();
    let e = Store::open_keyed(&db, embedder(), Some(&other))
        .err()
        .expect("another key")
        .to_string();
    assert!(e.contains("could not be opened with this key"), "{e}");
}

/// A plain file with `n` memories (their vectors made up: nothing here searches by meaning).
fn plain_file(dir: &Path, n: usize) -> PathBuf {
    let db = dir.join("m.sqlite");
    let store = Store::open_keyed(&db, embedder(), None).unwrap();
    let texts: Vec<String> = (0..n).map(|i| format!("note {i}: {SECRET}")).collect();
    let vectors: Vec<Vec<f32>> = (0..n)
        .map(|i| {
            let mut v = vec![0.0; EMBED_DIM];
            v[i % EMBED_DIM] = 1.0;
            v
        })
        .collect();
    let batch: Vec<(NewMemory, &[f32])> = texts
        .iter()
        .zip(&vectors)
        .map(|(t, v)| {
            let m = NewMemory {
                scope: DEFAULT_SCOPE,
                session: "s",
                text: t,
                ..Default::default()
            };
            (m, v.as_slice())
        })
        .collect();
    store.remember_batch(&batch).unwrap();
    db
}

fn embedder() -> Arc<LazyEmbedder> {
    Arc::new(LazyEmbedder::new())
}

fn count(db: &Path, pass: Option<&Path>) -> usize {
    let out = ok(
        cli(db, pass)
            .args(["list", "--limit", "1000"])
            .output()
            .unwrap(),
        "list",
    );
    out.lines().filter(|l| l.contains("kumquat")).count()
}

#[test]
fn a_plain_file_is_encrypted_in_place_and_made_plain_again() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = plain_file(dir.path(), 20);
    let pass = passphrase(dir.path(), "pass", "a long and careful passphrase");
    assert_eq!(count(&db, None), 20);

    ok(
        cli(&db, Some(&pass)).arg("encrypt").output().unwrap(),
        "encrypt",
    );
    assert_eq!(FileState::of(&db).unwrap(), FileState::Encrypted);
    assert!(!conversion::copy_path(&db).exists());
    assert!(!strings(&db).contains("kumquat"));
    assert_eq!(count(&db, Some(&pass)), 20);
    let found = ok(
        cli(&db, Some(&pass))
            .args(["search", "kumquat"])
            .output()
            .unwrap(),
        "search",
    );
    assert!(found.contains("kumquat"), "full text lost: {found}");
    // Encrypting twice is refused and changes nothing.
    let e = failed(
        cli(&db, Some(&pass)).arg("encrypt").output().unwrap(),
        "again",
    );
    assert!(e.contains("already encrypted"), "{e}");

    ok(
        cli(&db, Some(&pass)).arg("decrypt").output().unwrap(),
        "decrypt",
    );
    assert_eq!(FileState::of(&db).unwrap(), FileState::Plain);
    assert_eq!(count(&db, None), 20);
    let found = ok(
        cli(&db, None).args(["search", "kumquat"]).output().unwrap(),
        "search",
    );
    assert!(found.contains("kumquat"), "{found}");
}

#[test]
fn a_kill_at_every_step_of_a_conversion_loses_nothing_and_the_file_opens() {
    let _g = common::shared();
    for point in conversion::POINTS {
        let dir = tempfile::tempdir().unwrap();
        let db = plain_file(dir.path(), 12);
        let pass = passphrase(dir.path(), "pass", "kill me softly");
        let out = cli(&db, Some(&pass))
            .arg("encrypt")
            .env(umwelt::crashpoint::ENV, point)
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(9), "{point}: not killed there");
        // Whatever the kill left opens, with all its memories: plain before the swap,
        // encrypted after it.
        let key = match FileState::of(&db).unwrap() {
            FileState::Plain => None,
            _ => Some(pass.as_path()),
        };
        let swapped = key.is_some();
        assert_eq!(swapped, *point == "convert.swapped", "{point}");
        assert_eq!(count(&db, key), 12, "{point}: memories lost");
        assert!(!conversion::copy_path(&db).exists(), "{point}: copy left");
        // And the conversion then finishes (or says it is done).
        if !swapped {
            ok(
                cli(&db, Some(&pass)).arg("encrypt").output().unwrap(),
                point,
            );
        }
        assert_eq!(count(&db, Some(&pass)), 12, "{point}");

        // Back to plain, killed at the same step: no plain copy is left beside the file.
        let out = cli(&db, Some(&pass))
            .arg("decrypt")
            .env(umwelt::crashpoint::ENV, point)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(9),
            "decrypt {point}: not killed there"
        );
        let key = match FileState::of(&db).unwrap() {
            FileState::Plain => None,
            _ => Some(pass.as_path()),
        };
        assert_eq!(
            key.is_none(),
            *point == "convert.swapped",
            "decrypt {point}"
        );
        assert_eq!(count(&db, key), 12, "decrypt {point}: memories lost");
        assert!(
            !conversion::copy_path(&db).exists(),
            "decrypt {point}: copy left"
        );
        ok(
            cli(&db, key)
                .args(["remember", "after the kill"])
                .output()
                .unwrap(),
            point,
        );
    }
}

#[test]
fn a_conversion_waits_for_no_one_it_is_refused_while_the_file_is_open_elsewhere() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = plain_file(dir.path(), 3);
    let pass = passphrase(dir.path(), "pass", "not now");
    let open = Store::open_keyed(&db, embedder(), None).unwrap();
    assert_eq!(open.count(DEFAULT_SCOPE).unwrap(), 3);
    let e = failed(
        cli(&db, Some(&pass)).arg("encrypt").output().unwrap(),
        "encrypt while open",
    );
    assert!(e.contains("open in another program"), "{e}");
    assert_eq!(FileState::of(&db).unwrap(), FileState::Plain);
    assert!(!conversion::copy_path(&db).exists());
    open.remember(DEFAULT_SCOPE, "s", "still writing").unwrap();
    drop(open);
    assert_eq!(count(&db, None), 3);
}

#[test]
fn an_encrypted_file_is_never_set_aside_as_damaged_a_damaged_one_still_is() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memories.sqlite");
    let key = Key::random().unwrap();
    let store = Store::open_keyed(&db, embedder(), Some(&key)).unwrap();
    store.remember(DEFAULT_SCOPE, "s", SECRET).unwrap();
    drop(store);
    let before = bytes(&db);
    // As the app opens its file at start: without a key, it is refused, and stays where it is.
    let e = umwelt::damaged::open_or_set_aside(&db, |p| Store::open_keyed(p, embedder(), None))
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("is encrypted"), "{e}");
    assert_eq!(bytes(&db), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("damaged")), "{names:?}");
    // A file that cannot be a database (not whole pages) is still set aside, with or without a key.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, "not a database, and not pages of one").unwrap();
    let e = Store::open_keyed(&junk, embedder(), Some(&key))
        .err()
        .expect("junk");
    assert!(umwelt::damaged::is_damaged_db(&e), "{e}");
    let (_, kept) =
        umwelt::damaged::open_or_set_aside(&junk, |p| Store::open_keyed(p, embedder(), None))
            .unwrap();
    assert!(kept.is_some());
}

/// A recordings folder as Umwelt leaves it: a WAV, a draft whose text is the secret, a spool
/// left by a crash, a transcribed file kept; each file's plain bytes by name.
fn recordings(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let rec = dir.join("recordings");
    std::fs::create_dir_all(&rec).unwrap();
    let tone: Vec<f32> = (0..48_000).map(|i| (i as f32 * 0.03).sin() * 0.4).collect();
    umwelt::audio::write_wav_16k_mono(&rec.join("1700000000001.wav"), &tone).unwrap();
    std::fs::write(
        rec.join("1700000000001.draft.json"),
        format!("{{\"text\": \"{SECRET}\"}}"),
    )
    .unwrap();
    let mut spool = umwelt::speech::spool::SpoolWriter::create(&rec, 16_000, None).unwrap();
    spool.append(&tone[..20_000]).unwrap();
    drop(spool);
    std::fs::write(rec.join("file-1700000000002.txt"), SECRET.repeat(50_000)).unwrap();
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&rec)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    files.sort();
    files
}

/// Every recording reads back as it was (sealed with `seal`, or plain); none was lost.
fn all_whole(files: &[(PathBuf, Vec<u8>)], seal: Option<&umwelt::sealed::Seal>, what: &str) {
    for (p, plain) in files {
        let spool = p.extension().is_some_and(|x| x == "spool");
        let opened = umwelt::sealed::open_file(p, seal, spool)
            .unwrap_or_else(|e| panic!("{what}: {} lost: {e}", p.display()));
        let mut back = Vec::new();
        let mut r = opened.reader;
        std::io::Read::read_to_end(&mut r, &mut back).unwrap();
        assert!(back == *plain, "{what}: {} changed", p.display());
    }
}

fn sealed_count(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .filter(|(p, _)| umwelt::sealed::is_sealed(p).unwrap())
        .count()
}

#[test]
fn recordings_are_encrypted_with_the_file_and_a_kill_between_two_loses_none() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = plain_file(dir.path(), 3);
    let files = recordings(dir.path());
    let pass = passphrase(dir.path(), "pass", "recordings too");
    let key = Key::from_passphrase_file(&pass).unwrap();
    use std::os::unix::process::ExitStatusExt;

    // Killed after the second recording was written sealed, before it replaced the plain one.
    let out = cli(&db, Some(&pass))
        .arg("encrypt")
        .env(umwelt::crashpoint::ENV, "recording.resealed#2")
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(9), "not killed while sealing");
    assert_eq!(
        sealed_count(&files),
        1,
        "one sealed, the others still plain"
    );
    let store = Store::open_keyed(&db, embedder(), Some(&key)).unwrap();
    let seal = store.seal().unwrap().expect("an encrypted file seals");
    all_whole(&files, Some(&seal), "after the kill");
    // The app's next start (or any settle) finishes.
    assert!(store.settle_recordings().unwrap().is_empty());
    assert_eq!(sealed_count(&files), files.len());
    all_whole(&files, Some(&seal), "sealed");
    // Found wholly sealed, the folder is not read again at the next start: a file put there by
    // hand now is left as it is (whatever Umwelt writes beside an encrypted file is sealed as
    // it is written). Made plain and encrypted again (below), the folder is swept again.
    let by_hand = dir.path().join("recordings").join("1700000000009.wav");
    std::fs::write(&by_hand, b"RIFF put there by hand").unwrap();
    assert!(store.settle_recordings().unwrap().is_empty());
    assert!(!umwelt::sealed::is_sealed(&by_hand).unwrap());
    std::fs::remove_file(&by_hand).unwrap();
    for (p, _) in &files {
        let found = strings(p);
        assert!(
            !found.contains("kumquat") && !found.contains("RIFF") && !found.contains("UMWSPOOL"),
            "{} shows its contents: {}",
            p.display(),
            &found[..found.len().min(200)]
        );
    }
    drop(store);

    // And back to plain, killed between two recordings the same way.
    let out = cli(&db, Some(&pass))
        .arg("decrypt")
        .env(umwelt::crashpoint::ENV, "recording.resealed#2")
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(9), "not killed while unsealing");
    assert_eq!(FileState::of(&db).unwrap(), FileState::Plain);
    assert_eq!(sealed_count(&files), files.len() - 1);
    let store = Store::open_keyed(&db, embedder(), None).unwrap();
    all_whole(&files, Some(&seal), "after the second kill");
    assert!(store.settle_recordings().unwrap().is_empty());
    assert_eq!(sealed_count(&files), 0);
    for (p, plain) in &files {
        assert_eq!(&bytes(p), plain, "{} not as it was", p.display());
    }
    drop(store);
    // Plain for good: the key went once the last sealed recording was unsealed.
    let kept: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM meta WHERE key = 'recordings_key'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 0);

    // Undisturbed, the command line does both in one go.
    ok(
        cli(&db, Some(&pass)).arg("encrypt").output().unwrap(),
        "encrypt",
    );
    assert_eq!(sealed_count(&files), files.len());
    ok(
        cli(&db, Some(&pass)).arg("decrypt").output().unwrap(),
        "decrypt",
    );
    assert_eq!(sealed_count(&files), 0);
}
