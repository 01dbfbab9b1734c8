//! Whisper with the real (converted) tiny.en model on speech made by espeak-ng.

use umwelt::speech::spool::SpoolWriter;
use umwelt::speech::{live, Decoding, DictationDrafts, Ears, Transcriber, Workspace};
use umwelt::{audio, Error, Store};

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

/// A dictation decodes partial after partial in one workspace (whisper's memory kept): each
/// decode gives what a fresh one gives, greedy or with the beam, short clip or long, nothing of
/// the clip before carried into the next; another model's decode takes the workspace over.
#[test]
fn one_workspace_decodes_clip_after_clip_as_fresh_memory_does() {
    let _process = common::shared();
    let t = Transcriber::load().expect("run scripts/setup-models.sh first");
    let dir = tempfile::tempdir().unwrap();
    let clips: Vec<Vec<f32>> = [
        "remember to buy milk",
        "the meeting with Anna moved to Friday afternoon, and the dentist wants to see me on Thursday",
        "call the plumber",
    ]
    .iter()
    .map(|s| {
        let wav = dir.path().join("s.wav");
        common::espeak_wav(s, &wav);
        audio::read_wav_16k_mono(&wav).unwrap()
    })
    .collect();
    // Without whisper's temperature fallback: it samples from the state's random generator,
    // which a kept state carries on from the decode before (a fresh one starts it again).
    let greedy = Decoding {
        beam: 1,
        fallback: false,
        ..Decoding::default()
    };
    let beam = Decoding {
        fallback: false,
        ..Decoding::default()
    };
    let mut work = Workspace::default();
    assert!(!work.is_held());
    for how in [&greedy, &beam, &greedy] {
        for pcm in &clips {
            let fresh = t.transcribe_with(pcm, how).unwrap();
            let kept = t.transcribe_in(&mut work, pcm, how).unwrap();
            assert!(!fresh.is_empty());
            // Words, not bytes: whisper's thread count follows the machine's load, and a beam
            // summed in another order may capitalise or punctuate differently.
            assert_eq!(
                common::words(&kept),
                common::words(&fresh),
                "beam {}",
                how.beam
            );
            assert!(work.is_held());
        }
    }
    let other = Transcriber::load().unwrap();
    let kept = other.transcribe_in(&mut work, &clips[1], &beam).unwrap();
    let fresh = other.transcribe_with(&clips[1], &beam).unwrap();
    assert_eq!(common::words(&kept), common::words(&fresh));
    let kept = t.transcribe_in(&mut work, &clips[0], &beam).unwrap();
    let fresh = t.transcribe_with(&clips[0], &beam).unwrap();
    assert_eq!(common::words(&kept), common::words(&fresh));
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
        let mut w =
            SpoolWriter::create(&recordings, 16_000, umwelt::sealed::Seal::for_tests()).unwrap();
        w.append(pcm).unwrap();
        w.path().to_path_buf()
    };
    let d = DictationDrafts::new(&recordings);
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

#[test]
fn a_nul_in_the_vocabulary_is_an_error_for_whisper_the_listener_and_recovery_never_a_panic() {
    let _process = common::shared();
    let ears = Ears::load().unwrap();
    let pcm = common::formant("remember to buy milk");
    let nul = Ears {
        decoding: Decoding {
            vocabulary: "Siob\0han".into(),
            ..Decoding::default()
        },
        ..ears.clone()
    };
    // whisper itself: an error that says what to do.
    let direct = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        nul.transcriber.transcribe_with(&pcm, &nul.decoding)
    }))
    .expect("transcribing with a NUL in the prompt must not panic");
    match direct {
        Err(Error::InvalidInput(m)) => assert!(m.contains("vocabulary"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The listening thread: it ends with that error, not dead.
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = live::listen(rx, 16_000, nul.listener(), |_| {}).unwrap();
    for block in pcm.chunks(4_000) {
        tx.send(block.to_vec()).unwrap();
    }
    tx.send(vec![0.0; 16_000]).unwrap();
    drop(tx);
    let heard = thread.join().expect("the listening thread must not die");
    assert!(heard.is_err(), "{heard:?}");
    // Recovery of a spool a crash left: a draft whose problem says why, the audio kept.
    let dir = tempfile::tempdir().unwrap();
    let recordings = dir.path().join("recordings");
    let mut w =
        SpoolWriter::create(&recordings, 16_000, umwelt::sealed::Seal::for_tests()).unwrap();
    w.append(&pcm).unwrap();
    w.append(&vec![0.0; 16_000]).unwrap();
    drop(w);
    let store = umwelt::Store::open(dir.path().join("m.sqlite")).unwrap();
    let r = DictationDrafts::new(&recordings).recover(&|| Ok(nul.clone()), &store);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.recovered.len(), 1);
    let problem = r.recovered[0].problem.clone().unwrap_or_default();
    assert!(problem.contains("vocabulary"), "{problem}");
    assert!(std::path::Path::new(&r.recovered[0].audio_path).exists());
}
