//! A missing or damaged model file gives an error naming the file and the command that fixes
//! it — never a crash or a hang. (Own process: it points the resolver at a folder of its own.)

use umwelt::models::{self, EMBED_MODEL, WHISPER_TINY_EN};
use umwelt::{speech::Transcriber, Error, Store};

use crate::common;

#[test]
fn missing_and_corrupt_models_are_reported_clearly() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("UMWELT_MODELS_DIR", dir.path());
    std::env::set_var("XDG_CACHE_HOME", dir.path().join("no-cache"));

    // A corrupt whisper file, where the resolver looks first.
    let bad = dir.path().join(WHISPER_TINY_EN);
    std::fs::write(&bad, b"lmgg and then garbage").unwrap();
    let e = Transcriber::load()
        .err()
        .expect("a damaged model must not load");
    assert!(matches!(e, Error::ModelCorrupt { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&bad.display().to_string()) && msg.contains("setup-models.sh"),
        "{msg}"
    );
    // Loading it directly (skipping the checksum) is still an error, not a crash.
    assert!(Transcriber::load_from(&bad).is_err());

    // A corrupt embedding model: the store opens (lazily), remembering reports the file.
    std::fs::write(dir.path().join(EMBED_MODEL), vec![7u8; 1000]).unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let msg = store.remember("me", "", "hello").unwrap_err().to_string();
    assert!(msg.contains("setup-models.sh"), "{msg}");
    assert_eq!(store.count("me").unwrap(), 0, "nothing half-written");

    // A model that is not anywhere.
    std::fs::remove_file(&bad).unwrap();
    let e = models::locate(WHISPER_TINY_EN).unwrap_err();
    assert!(
        matches!(e, Error::ModelMissing { .. }) && e.to_string().contains("setup-models.sh"),
        "{e}"
    );
}
