//! Helpers shared by the integration tests: real models, real speech from espeak-ng.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Speak `text` into a WAV file with espeak-ng (22.05 kHz mono), as a stand-in for a voice.
pub fn espeak_wav(text: &str, path: &Path) {
    let st = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(path)
        .arg(text)
        .status()
        .expect("espeak-ng is installed by scripts/setup.sh");
    assert!(st.success(), "espeak-ng failed");
}

/// Lower-case words without punctuation, for comparing transcripts.
pub fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// A fresh memory file in a temporary folder (on disk, never `:memory:`).
pub fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memories.sqlite");
    (dir, db)
}
