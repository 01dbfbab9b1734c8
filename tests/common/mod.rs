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

/// Speak `text` with espeak-ng into `dir/say.raw` as S16_LE 16 kHz mono, with `pad_before` and
/// `pad_after` seconds of silence around it (the format the ALSA file microphone reads).
pub fn espeak_raw(text: &str, dir: &Path, pad_before: f32, pad_after: f32) -> std::path::PathBuf {
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
pub fn file_microphone(dir: &Path, raw: &Path) {
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
pub fn write_raw(path: &Path, pcm: &[f32]) {
    let bytes: Vec<u8> = pcm
        .iter()
        .flat_map(|x| ((x.clamp(-1.0, 1.0) * 32767.0) as i16).to_le_bytes())
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// `text` spoken by espeak-ng (through the engine's own binding), as 16 kHz mono samples.
pub fn formant(text: &str) -> Vec<f32> {
    let (pcm, rate) = umwelt::voice::phonemes::formant_speech(text, "en-us", 175).unwrap();
    umwelt::audio::resample(&pcm, rate, 16_000).unwrap()
}
