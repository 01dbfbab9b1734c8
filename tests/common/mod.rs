//! Helpers shared by the integration tests: real models, real speech from espeak-ng.
#![allow(dead_code)]

pub(crate) mod hostile;

use std::path::Path;
use std::process::Command;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Speak `text` into a WAV file with espeak-ng (22.05 kHz mono), as a stand-in for a voice.
pub(crate) fn espeak_wav(text: &str, path: &Path) {
    let st = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(path)
        .arg(text)
        .status()
        .expect("espeak-ng is installed by scripts/setup.sh");
    assert!(st.success(), "espeak-ng failed");
}

/// Lower-case words without punctuation, for comparing transcripts.
pub(crate) fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// A fresh memory file in a temporary folder (on disk, never `:memory:`).
pub(crate) fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memories.sqlite");
    (dir, db)
}

/// Speak `text` with espeak-ng into `dir/say.raw` as S16_LE 16 kHz mono, with `pad_before` and
/// `pad_after` seconds of silence around it (the format the ALSA file microphone reads).
pub(crate) fn espeak_raw(
    text: &str,
    dir: &Path,
    pad_before: f32,
    pad_after: f32,
) -> std::path::PathBuf {
    let wav = dir.join("say.wav");
    espeak_wav(text, &wav);
    let raw = dir.join("say.raw");
    let st = Command::new("sox")
        .arg(&wav)
        .args([
            "-r",
            "16000",
            "-c",
            "1",
            "-b",
            "16",
            "-e",
            "signed-integer",
            "-t",
            "raw",
        ])
        .arg(&raw)
        .args(["pad", &pad_before.to_string(), &pad_after.to_string()])
        .status()
        .expect("sox is installed by scripts/setup.sh");
    assert!(st.success(), "sox failed");
    raw
}

/// Write `dir/alsa/asoundrc` so the default capture device reads `raw` (S16_LE, 16 kHz, mono)
/// and playback goes nowhere. ALSA reads it from `$XDG_CONFIG_HOME` = `dir`, once per process.
pub(crate) fn file_microphone(dir: &Path, raw: &Path) {
    std::fs::create_dir_all(dir.join("alsa")).unwrap();
    let conf = format!(
        r#"pcm.!default {{
  type asym
  capture.pcm "umwelt_file_mic"
  playback.pcm "null"
}}
pcm.umwelt_file_mic {{
  type plug
  slave {{
    pcm {{ type file slave.pcm "null" file "/dev/null" infile "{}" format "raw" }}
    format S16_LE
    rate 16000
    channels 1
  }}
}}
"#,
        raw.display()
    );
    std::fs::write(dir.join("alsa/asoundrc"), conf).unwrap();
}

/// Write 16 kHz mono samples as the raw S16_LE file the ALSA file microphone reads.
pub(crate) fn write_raw(path: &Path, pcm: &[f32]) {
    let bytes: Vec<u8> = pcm
        .iter()
        .flat_map(|x| ((x.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes())
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// `text` spoken by espeak-ng (through the engine's own binding), as 16 kHz mono samples.
pub(crate) fn formant(text: &str) -> Vec<f32> {
    let (pcm, rate) = umwelt::voice::phonemes::formant_speech(text, "en-us", 175).unwrap();
    umwelt::audio::resample(&pcm, rate, 16_000).unwrap()
}

/// Every integration test runs in one process (`tests/it/main.rs`), so each says first how it
/// shares it: [`shared`], [`exclusive`] or [`own_process!`]. This lock is what they hold.
static PROCESS: RwLock<()> = RwLock::new(());

/// For a test that changes nothing process-wide: it runs alongside the other shared tests, and
/// never while a test flips process-wide state (so, for instance, `optimisations::enabled()`
/// stays what it was when the test started).
pub(crate) fn shared() -> RwLockReadGuard<'static, ()> {
    PROCESS.read().unwrap_or_else(|p| p.into_inner())
}

/// For a test that flips process-wide state (`optimisations::set_enabled`): no other test of the
/// process runs meanwhile.
pub(crate) fn exclusive() -> RwLockWriteGuard<'static, ()> {
    PROCESS.write().unwrap_or_else(|p| p.into_inner())
}

/// The environment variable that tells a child process which test it was started for.
const OWN_PROCESS: &str = "UMWELT_TEST_OWN_PROCESS";

/// For a test that changes what a process cannot take back (an environment variable read once,
/// ALSA's configuration, which ALSA reads once per process) or that times itself against the
/// clock: `if common::own_process!() { return; }` runs the test in a child process of this
/// binary, alone, while no other test of this process runs; the child runs the test's body.
macro_rules! own_process {
    () => {{
        fn here() {}
        $crate::common::run_in_own_process(std::any::type_name_of_val(&here))
    }};
}
pub(crate) use own_process;

/// `here`: the path of a function inside the test (`it::module::test::here`). In the parent:
/// runs the test in a child and returns true once it passed (panics with its output if not). In
/// the child: returns false, and the test runs.
pub(crate) fn run_in_own_process(here: &str) -> bool {
    let path = here
        .strip_suffix("::here")
        .expect("called through own_process!()");
    // libtest names a test by its path without the crate's name.
    let test = path.split_once("::").map_or(path, |(_crate, rest)| rest);
    if std::env::var_os(OWN_PROCESS).is_some_and(|v| v == test) {
        return false;
    }
    let _alone = exclusive();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(OWN_PROCESS, test)
        .output()
        .expect("the test binary runs itself");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} in its own process: {}\n{stdout}\n{stderr}",
        out.status
    );
    print!("{stdout}");
    eprint!("{stderr}");
    true
}

/// A connection of the test's own on a store's file, to read or change its tables directly:
/// keyed with the public test key when the suite runs on encrypted files
/// (`UMWELT_TEST_ENCRYPTION=on`) and the file is encrypted or new (made encrypted, as the
/// store would make it).
#[allow(dead_code)]
pub(crate) fn raw_connection(path: &Path) -> rusqlite::Connection {
    use umwelt::store::cipher::{self, FileState};
    let conn = rusqlite::Connection::open(path).unwrap();
    if let Some(key) = cipher::test_key() {
        if FileState::of(path).unwrap() != FileState::Plain {
            cipher::unlock(&conn, path, key).unwrap();
        }
    }
    conn
}
