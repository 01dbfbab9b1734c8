//! Settings → Privacy applied at every open (`umwelt::at_rest`), against the real keyring
//! (gnome-keyring-daemon on the test's own bus) and against a bus with none.

use std::path::Path;
use std::sync::Arc;

use umwelt::at_rest::{self, Ask, Opened, Opening};
use umwelt::embed::LazyEmbedder;
use umwelt::keyring::{KeyStore, SystemKeyring};
use umwelt::settings::Encryption;
use umwelt::store::cipher::{FileState, Key};
use umwelt::store::DEFAULT_SCOPE;
use umwelt::Store;

use crate::common;
use crate::keyring::{bus, session_with_keyring};

fn open(db: &Path, choice: Encryption, pass: Option<&str>) -> Opening {
    let key = pass.map(|p| Key::passphrase(p).unwrap());
    at_rest::open(
        db,
        Arc::new(LazyEmbedder::new()),
        choice,
        &SystemKeyring::for_file(db),
        key.as_ref(),
    )
    .unwrap()
}

fn opened(o: Opening) -> Opened {
    match o {
        Opening::Open(o) => *o,
        Opening::Ask(a) => panic!("asked for a passphrase: {a:?}"),
    }
}

fn asked(o: Opening) -> Ask {
    match o {
        Opening::Ask(a) => a,
        Opening::Open(o) => panic!(
            "opened without a passphrase (encrypted: {})",
            o.store.is_encrypted()
        ),
    }
}

fn remember(store: &Store, text: &str) {
    let v = vec![0.5f32; umwelt::embed::EMBED_DIM];
    let m = umwelt::store::NewMemory {
        scope: DEFAULT_SCOPE,
        session: "s",
        text,
        ..Default::default()
    };
    store.remember_with_vector(&m, &v).unwrap();
}

fn has_text(db: &Path, text: &str) -> bool {
    let bytes = std::fs::read(db).unwrap();
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn the_file_follows_the_choice_through_keyring_passphrase_and_plain() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let _bus = session_with_keyring(dir.path());
    let db = dir.path().join("memories.sqlite");
    let ring = SystemKeyring::for_file(&db);

    // An older Umwelt's plain file, encrypted in place at the first start with a key that is
    // made and kept in the keyring then.
    let plain = Store::open_keyed(&db, Arc::new(LazyEmbedder::new()), None).unwrap();
    remember(&plain, "the spare key is under the blue flowerpot");
    drop(plain);
    assert!(has_text(&db, "blue flowerpot"));
    // Its recordings folder: an unsaved dictation's draft, and its WAV.
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    let draft = rec.join("1700000000001.draft.json");
    let wav = rec.join("1700000000001.wav");
    std::fs::write(&draft, DRAFT).unwrap();
    umwelt::audio::write_wav_16k_mono(&wav, &[0.25; 16_000]).unwrap();
    let o = opened(open(&db, Encryption::Keyring, None));
    assert!(o.store.is_encrypted());
    // The recordings are encrypted with it, with a key kept inside the file.
    assert!(is_sealed(&draft) && is_sealed(&wav));
    assert!(!has_text(&draft, "red door") && !has_text(&wav, "RIFF"));
    let seal = o.store.seal().unwrap();
    assert_eq!(read_draft(&draft, seal.as_ref()), DRAFT);
    assert!(o.done.as_deref().unwrap().contains("now encrypted"));
    assert!(o.warning.is_none());
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 1);
    remember(&o.store, "second note");
    drop(o);
    assert_eq!(FileState::of(&db).unwrap(), FileState::Encrypted);
    assert!(!has_text(&db, "blue flowerpot"));
    assert!(ring.get().unwrap().is_some(), "the key is kept");
    // The next start opens it with the keyring's key, asking nothing, doing nothing.
    let o = opened(open(&db, Encryption::Keyring, None));
    assert!(o.done.is_none() && o.warning.is_none());
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 2);
    drop(o);

    // A passphrase chosen in Settings: asked to choose one; the file moves to it, the
    // keyring's entry goes.
    let a = asked(open(&db, Encryption::Passphrase, None));
    assert!(a.choose, "{a:?}");
    let o = opened(open(&db, Encryption::Passphrase, Some("correct horse")));
    assert!(o.store.is_encrypted());
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 2);
    // A new key for the file leaves the recordings as they are: their key is inside it.
    assert_eq!(read_draft(&draft, o.store.seal().unwrap().as_ref()), DRAFT);
    drop(o);
    assert!(ring.get().unwrap().is_none(), "the old key is removed");
    // From now on it is asked for; a wrong one is asked again, with nothing changed.
    let a = asked(open(&db, Encryption::Passphrase, None));
    assert!(!a.choose);
    let before = std::fs::read(&db).unwrap();
    let a = asked(open(&db, Encryption::Passphrase, Some("wrong horse")));
    assert!(!a.choose && a.reason.contains("does not open"), "{a:?}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "a wrong passphrase changed the file"
    );
    let o = opened(open(&db, Encryption::Passphrase, Some("correct horse")));
    assert!(o.done.is_none());
    drop(o);

    // Back to the keyring: the passphrase is asked once, and the key moves into the keyring.
    let a = asked(open(&db, Encryption::Keyring, None));
    assert!(!a.choose && a.reason.contains("holds no key"), "{a:?}");
    let a = asked(open(&db, Encryption::Keyring, Some("wrong horse")));
    assert!(a.reason.contains("does not open"), "{a:?}");
    assert!(
        ring.get().unwrap().is_none(),
        "a wrong passphrase put a key in the keyring"
    );
    let o = opened(open(&db, Encryption::Keyring, Some("correct horse")));
    assert!(o.done.as_deref().unwrap().contains("keyring"));
    drop(o);
    let o = opened(open(&db, Encryption::Keyring, None));
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 2);
    drop(o);

    // Off while another program has the file open (an agent's server): it cannot be made
    // plain now, so it opens encrypted, and the warning says so; nothing is lost.
    let key = ring.get().unwrap().expect("the keyring's key");
    let agent = Store::open_keyed(&db, Arc::new(LazyEmbedder::new()), Some(&key)).unwrap();
    let o = opened(open(&db, Encryption::Off, None));
    assert!(o.store.is_encrypted());
    assert!(
        o.warning
            .as_deref()
            .unwrap()
            .contains("stays encrypted for now"),
        "{:?}",
        o.warning
    );
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 2);
    drop((o, agent));
    assert!(ring.get().unwrap().is_some(), "the key is still needed");

    // Off: made plain with the keyring's key, and the key removed.
    let o = opened(open(&db, Encryption::Off, None));
    assert!(!o.store.is_encrypted());
    assert!(o.done.as_deref().unwrap().contains("no longer encrypted"));
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 2);
    drop(o);
    assert_eq!(FileState::of(&db).unwrap(), FileState::Plain);
    assert!(ring.get().unwrap().is_none());
    assert!(!db.with_extension("sqlite.converting").exists());
    // And the recordings with it.
    assert!(!is_sealed(&draft) && !is_sealed(&wav));
    assert_eq!(std::fs::read_to_string(&draft).unwrap(), DRAFT);
    assert_eq!(
        umwelt::audio::read_wav_16k_mono(&wav).unwrap().len(),
        16_000
    );
}

const DRAFT: &str = r#"{"text": "the red door code is 4711"}"#;

fn is_sealed(path: &Path) -> bool {
    umwelt::sealed::is_sealed(path).unwrap()
}

fn read_draft(path: &Path, seal: Option<&umwelt::sealed::Seal>) -> String {
    String::from_utf8(umwelt::sealed::read(path, seal).unwrap().to_vec()).unwrap()
}

#[test]
fn without_a_keyring_a_new_file_is_plain_with_a_warning_and_an_encrypted_one_is_kept() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let _bus = bus(dir.path());
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &_bus.address);
    let db = dir.path().join("memories.sqlite");

    // Headless: never a crash, never plain in silence.
    let o = opened(open(&db, Encryption::Keyring, None));
    assert!(!o.store.is_encrypted());
    let warning = o.warning.clone().expect("a warning");
    assert!(
        warning.contains("unencrypted") && warning.contains("keyring"),
        "{warning}"
    );
    remember(&o.store, "a plain note");
    drop(o);

    // An encrypted file (a passphrase's) without a keyring: asked, and kept byte for byte.
    let pass = dir.path().join("pass");
    std::fs::write(&pass, "hunter2\n").unwrap();
    umwelt::store::conversion::encrypt(&db, &Key::from_passphrase_file(&pass).unwrap()).unwrap();
    let before = std::fs::read(&db).unwrap();
    let a = asked(open(&db, Encryption::Keyring, None));
    assert!(a.reason.contains("keyring is not available"), "{a:?}");
    let a = asked(open(&db, Encryption::Off, None));
    assert!(!a.choose, "{a:?}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // Given the passphrase, the keyring still unreachable: opened, and said why it stays so.
    let o = opened(open(&db, Encryption::Keyring, Some("hunter2")));
    assert!(o.store.is_encrypted());
    assert!(o.warning.as_deref().unwrap().contains("passphrase"));
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 1);
    drop(o);
    // Off, with the passphrase: plain again.
    let o = opened(open(&db, Encryption::Off, Some("hunter2")));
    assert!(!o.store.is_encrypted());
    assert_eq!(o.store.count(DEFAULT_SCOPE).unwrap(), 1);
}
