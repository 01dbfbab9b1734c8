//! A three-minute dictation with pauses, through the real microphone path (an ALSA file device
//! read by cpal): it is cut at its pauses, every part is transcribed, and the draft holds it all.
//! (Own process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once.)

use std::time::Duration;

use umwelt::bench::dictation;
use umwelt::speech::{wer, DictationDrafts, Ears};

use crate::common;

#[test]
fn a_three_minute_dictation_with_pauses_is_split_and_transcribed_completely() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let texts = dictation::utterances();
    let pause = vec![0.0f32; 16_000 * 9 / 2];
    let mut pcm = Vec::new();
    for t in &texts {
        pcm.extend(common::formant(t));
        pcm.extend_from_slice(&pause);
    }
    let secs = pcm.len() as f32 / 16_000.0;
    assert!(secs >= 180.0, "only {secs} s of audio");
    let raw = dir.path().join("long.raw");
    common::write_raw(&raw, &pcm);
    common::file_microphone(dir.path(), &raw);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());

    let ears = Ears::load().unwrap();
    let d = DictationDrafts::new(dir.path().join("recordings"));
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = heard.clone();
    let live = d
        .start(None, &ears, move |x| h.lock().unwrap().push(x.clone()))
        .unwrap();
    assert!(live.wait_for(secs, Duration::from_secs(120)));
    let draft = d.stop(live).unwrap();
    assert!(draft.problem.is_none(), "{draft:?}");

    let updates = heard.lock().unwrap();
    let last = updates.last().expect("the listener reported progress");
    assert!(
        last.segments as usize >= texts.len() - 2,
        "{} segments for {} utterances",
        last.segments,
        texts.len()
    );
    // Nothing dropped: every utterance left most of its words in the text.
    let got = common::words(&draft.text);
    for t in &texts {
        let want = common::words(t);
        let found = want.iter().filter(|w| got.contains(w)).count();
        assert!(
            found * 2 >= want.len(),
            "{t:?} is missing from the draft: {}",
            draft.text
        );
    }
    let reference = texts.join(" ");
    let e = wer::word_error_rate(&reference, &draft.text);
    assert!(e < 0.4, "word error rate {e:.2}: {}", draft.text);
    assert!(draft.seconds >= 180.0, "{}", draft.seconds);
}
