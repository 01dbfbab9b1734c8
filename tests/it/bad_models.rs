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

/// A model hashed once and then damaged on disk (truncated by a full disk, replaced by another
/// version) is checked again at its next load, after an idle unload say; and ONNX Runtime given
/// a truncated file directly says it is damaged instead of aborting.
#[test]
fn a_model_damaged_after_its_first_check_is_caught_at_the_next_load() {
    let _process = common::shared();
    let real = models::resolve(EMBED_MODEL).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(EMBED_MODEL);
    std::fs::copy(&real, &copy).unwrap();
    models::verify(EMBED_MODEL, &copy).unwrap();
    let len = std::fs::metadata(&copy).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&copy)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let e = models::verify(EMBED_MODEL, &copy).unwrap_err();
    assert!(matches!(e, Error::ModelCorrupt { .. }), "{e}");
    assert!(e.to_string().contains("setup-models.sh"), "{e}");
    // Skipping the check: ONNX Runtime refuses the truncated file with an error, not an abort.
    let e = models::onnx::ort_session(&copy, EMBED_MODEL).unwrap_err();
    assert!(matches!(e, Error::ModelCorrupt { .. }), "{e}");
    assert!(e.to_string().contains("damaged"), "{e}");
    // Put back whole, it passes again (hashed anew, as it changed).
    std::fs::copy(&real, &copy).unwrap();
    models::verify(EMBED_MODEL, &copy).unwrap();
}
