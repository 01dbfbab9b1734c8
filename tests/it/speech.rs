//! Whisper with the real (converted) tiny.en model on speech made by espeak-ng.

use umwelt::speech::spool::SpoolWriter;
use umwelt::speech::{Dictation, Ears, Transcriber};
use umwelt::{audio, Store};

use crate::common;

#[test]
fn spoken_sentences_are_transcribed_with_the_expected_words() {
    let _process = common::shared();
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
fn a_dictation_is_on_disk_before_it_is_transcribed_and_becomes_a_draft_then_a_memory() {
    let _process = common::shared();
    let ears = Ears::load().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let wav = dir.path().join("in.wav");
    common::espeak_wav("remember to buy milk", &wav);
    let pcm = audio::read_wav_16k_mono(&wav).unwrap();
    let recordings = dir.path().join("recordings");
    let spool_of = |pcm: &[f32]| {
        let mut w = SpoolWriter::create(&recordings, 16_000).unwrap();
        w.append(pcm).unwrap();
        w.path().to_path_buf()
    };
    let d = Dictation::new(&recordings);
    let draft = d.draft_from_spool(&spool_of(&pcm), &ears).unwrap();
    assert!(draft.problem.is_none(), "{draft:?}");
    assert!(
        common::words(&draft.text).contains(&"milk".to_string()),
        "{}",
        draft.text
    );
    assert_eq!(d.drafts(), vec![draft.clone()]);
    // The recording is kept whole, sample for sample.
    assert_eq!(
        audio::read_wav_16k_mono(std::path::Path::new(&draft.audio_path))
            .unwrap()
            .len(),
        pcm.len()
    );
    // The user edits the text before saving.
    let m = d
        .save(&draft.id, "remember to buy oat milk", &store, "me", "")
        .unwrap();
    assert_eq!(m.text, "remember to buy oat milk");
    assert_eq!(m.source, "dictated");
    assert_eq!(m.audio_path.as_deref(), Some(draft.audio_path.as_str()));
    assert!(d.drafts().is_empty());
    assert!(d.save(&draft.id, "again", &store, "me", "").is_err());

    // Silence transcribes to nothing: the draft says so and keeps the audio for a retry.
    let silent = d
        .draft_from_spool(&spool_of(&[0.0; 32_000]), &ears)
        .unwrap();
    assert!(silent.text.is_empty());
    assert!(
        silent.problem.as_deref().unwrap().contains("no speech"),
        "{silent:?}"
    );
    assert!(std::path::Path::new(&silent.audio_path).exists());
    let retried = d.retry(&silent.id, &ears).unwrap();
    assert!(retried.problem.is_some());
    // An empty note cannot be saved; discarding removes the recording too.
    assert!(d.save(&silent.id, "  ", &store, "me", "").is_err());
    d.discard(&silent.id).unwrap();
    assert!(!std::path::Path::new(&silent.audio_path).exists());
    assert!(d.drafts().is_empty());
    // A hostile id reaches no file.
    assert!(d.draft("../../etc/passwd").is_err());
    assert!(ears.transcriber.transcribe(&[]).is_err());
}
