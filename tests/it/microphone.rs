//! The real microphone path: an ALSA configuration written by the test turns a raw file into the
//! default capture device, cpal records from it, and whisper hears the sentence.
//! (Own process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once, when cpal first opens it.)

use std::time::Duration;

use umwelt::speech::{recorder, Recorder, Transcriber};

use crate::common;

#[test]
fn a_sentence_through_the_alsa_microphone_becomes_the_right_text() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // One second of silence after the sentence, as a speaker would leave before pressing Stop.
    let raw = common::espeak_raw("remember to buy milk", dir.path(), 0.0, 1.0);
    common::file_microphone(dir.path(), &raw);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());

    let devices = recorder::input_devices().unwrap();
    assert!(devices.iter().any(|d| d.is_default), "{devices:?}");

    let secs = std::fs::metadata(&raw).unwrap().len() as f32 / 32_000.0;
    let rec = Recorder::start(None, &dir.path().join("recordings"), None, None).unwrap();
    // The file device runs faster than real time: wait for the samples, not the clock.
    assert!(
        rec.wait_for(secs, Duration::from_secs(30)),
        "only {} s captured",
        rec.captured_seconds()
    );
    let pcm = rec.stop_to_samples().unwrap();
    assert!(
        pcm.len() as f32 >= secs * 16_000.0 * 0.98,
        "{} samples",
        pcm.len()
    );

    let text = Transcriber::load().unwrap().transcribe(&pcm).unwrap();
    let got = common::words(&text);
    for w in ["buy", "milk"] {
        assert!(got.contains(&w.to_string()), "heard {text:?}");
    }

    // A microphone that is not there gives a clear message.
    let e = Recorder::start(Some("no such microphone"), dir.path(), None, None)
        .err()
        .expect("must fail")
        .to_string();
    assert!(e.contains("not connected"), "{e}");
}
