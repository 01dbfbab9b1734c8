//! Whisper with the real (converted) tiny.en model on speech made by espeak-ng.

mod common;

use umwelt::speech::{Dictation, Transcriber};
use umwelt::{audio, Store};

#[test]
fn spoken_sentences_are_transcribed_with_the_expected_words() {
    let t = Transcriber::load().expect("run scripts/setup-models.sh first");
    let dir = tempfile::tempdir().unwrap();
    for sentence in [
        "remember to buy milk",
        "the meeting with Anna moved to Friday afternoon",
    ] {
        let wav = dir.path().join("s.wav");
        common::espeak_wav(sentence, &wav);
        let pcm = audio::read_wav_16k_mono(&wav).unwrap();
        let text = t.transcribe(&pcm).unwrap();
        let got = common::words(&text);
        let want = common::words(sentence);
        let missing: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
        assert!(
            missing.len() <= want.len() / 4,
            "{sentence:?} came back as {text:?}; missing {missing:?}"
        );
    }
}

#[test]
fn a_dictation_is_on_disk_before_it_is_transcribed_and_becomes_a_memory() {
    let t = Transcriber::load().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let wav = dir.path().join("in.wav");
    common::espeak_wav("remember to buy milk", &wav);
    let pcm = audio::read_wav_16k_mono(&wav).unwrap();
    let d = Dictation::new(dir.path().join("recordings"));
    let m = d.finish(&pcm, &t, &store, "me", "").unwrap();
    assert!(
        common::words(&m.text).contains(&"milk".to_string()),
        "{}",
        m.text
    );
    assert_eq!(m.source, "dictated");
    let kept = std::path::PathBuf::from(m.audio_path.unwrap());
    assert_eq!(audio::read_wav_16k_mono(&kept).unwrap().len(), pcm.len());

    // Silence transcribes to nothing: the error says so and where the audio is kept.
    let e = d
        .finish(&vec![0.0; 32_000], &t, &store, "me", "")
        .unwrap_err()
        .to_string();
    assert!(e.contains("kept at"), "{e}");
    assert_eq!(
        std::fs::read_dir(dir.path().join("recordings"))
            .unwrap()
            .count(),
        2
    );
    assert!(t.transcribe(&[]).is_err());
}
