//! Nothing clipped: an utterance that starts at the very first sample the microphone delivers
//! keeps its first word (the pre-roll and the detector's warm-up must not eat it).
//! (Own process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once.)

use std::time::Duration;

use umwelt::speech::{DictationDrafts, Ears};

use crate::common;

#[test]
fn the_first_word_of_speech_starting_at_sample_zero_is_kept() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let speech = common::formant("Milk, bread and coffee are on the list.");
    // Start exactly at the first sound: no leading silence at all.
    let first = speech.iter().position(|x| x.abs() > 0.01).unwrap();
    let mut pcm = speech[first..].to_vec();
    assert!(pcm[0].abs() > 0.01);
    pcm.extend(vec![0.0; 16_000]);
    let raw = dir.path().join("say.raw");
    common::write_raw(&raw, &pcm);
    common::file_microphone(dir.path(), &raw);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());

    let ears = Ears::load().unwrap();
    let d = DictationDrafts::new(dir.path().join("recordings"));
    let live = d.start(None, &ears, |_| {}).unwrap();
    assert!(live.wait_for(pcm.len() as f32 / 16_000.0, Duration::from_secs(30)));
    let draft = d.stop(live).unwrap();
    let words = common::words(&draft.text);
    assert_eq!(
        words.first().map(String::as_str),
        Some("milk"),
        "heard {:?}",
        draft.text
    );
}
