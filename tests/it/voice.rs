//! The voice with the real model: what it says is what whisper hears, streamed playback has no
//! gaps, and bad input gets a clear answer instead of a panic or a hang.

use std::time::{Duration, Instant};

use umwelt::speech::{wer, Transcriber};
use umwelt::voice::{self, Output, SpeakOptions, Speaker, VoiceStyle, SAMPLE_RATE};
use umwelt::{audio, Error};

use crate::common;

/// Sentences a memory app reads back.
const SENTENCES: &[&str] = &[
    "Remember to buy milk and bread on the way home.",
    "The meeting with Anna moved to Friday afternoon.",
    "Call the plumber about the dripping tap in the bathroom.",
    "The parking spot is on level three, next to the lift.",
    "Her birthday present is the blue scarf from the market.",
    "Water the plants on the balcony every second morning.",
];

fn speak_collect(speaker: &Speaker, text: &str, voice: &str) -> Vec<f32> {
    let opts = SpeakOptions {
        voice: voice.into(),
        speed: 1.0,
    };
    speaker
        .speak(text, &opts, Output::Collect)
        .unwrap()
        .wait()
        .unwrap()
        .samples
}

fn hear(t: &Transcriber, pcm24k: &[f32]) -> String {
    let mut pcm = audio::resample(pcm24k, SAMPLE_RATE, 16_000).unwrap();
    // Half a second of room before and after, as any recording has.
    let pad = vec![0.0; 8_000];
    pcm = [pad.clone(), pcm, pad].concat();
    t.transcribe(&pcm).unwrap()
}

#[test]
fn what_the_voice_says_is_what_whisper_hears() {
    let _process = common::shared();
    let speaker = Speaker::new();
    let t = Transcriber::load().expect("run scripts/setup-models.sh first");
    let mut pairs = Vec::new();
    for (i, s) in SENTENCES.iter().enumerate() {
        // An American and a British voice, a female and a male one.
        let v = ["af_heart", "am_michael", "bf_emma"][i % 3];
        let heard = hear(&t, &speak_collect(&speaker, s, v));
        eprintln!("{v}: {s:?} -> {heard:?}");
        pairs.push((s.to_string(), heard));
    }
    let rate = wer::corpus_wer(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    eprintln!("round-trip word error rate: {:.1} %", rate * 100.0);
    assert!(
        rate <= 0.10,
        "word error rate {:.1} % over {pairs:?}",
        rate * 100.0
    );
}

#[test]
fn stop_during_synthesis_stops_synthesis_and_playback_at_once() {
    let _process = common::shared();
    let speaker = Speaker::new();
    speaker.warm_up(voice::DEFAULT_VOICE).unwrap();
    // 20 000 characters: minutes of speech, if nothing stopped it.
    let long: String = SENTENCES
        .iter()
        .cycle()
        .take(400)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(20_000)
        .collect();
    let speech = speaker
        .speak(&long, &SpeakOptions::default(), Output::Paced)
        .unwrap();
    // Stop once it is audible: synthesis of the rest is under way then.
    assert!(speech.wait_first_audio(Duration::from_secs(60)).is_some());
    let t = Instant::now();
    speech.stop();
    let r = speech.wait().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stopping took {:?}",
        t.elapsed()
    );
    assert!(r.stopped && r.first_audio_ms.is_some(), "{r:?}");
    assert!(r.audio_seconds < 60.0, "{r:?}");
}

#[test]
fn bad_input_gets_a_clear_answer() {
    let _process = common::shared();
    let speaker = Speaker::new();
    let opts = SpeakOptions::default();
    for empty in ["", "   \n ", "😀🎉", "…!?"] {
        let e = speaker
            .speak(empty, &opts, Output::Collect)
            .err()
            .expect("nothing to say must fail");
        assert!(
            e.to_string().contains("nothing to read aloud"),
            "{empty:?}: {e}"
        );
    }
    // Emoji inside words are skipped; the words are read.
    let r = speaker
        .speak("Buy milk 🥛 today", &opts, Output::Collect)
        .unwrap()
        .wait()
        .unwrap();
    assert!(r.audio_seconds > 0.5, "{r:?}");
    // A script espeak cannot phonemise: no panic, no hang; a clear answer or silence.
    let t = Instant::now();
    match speaker.speak("ᚠᛇᚻ ᛒᛦᚦ", &opts, Output::Collect) {
        Ok(s) => {
            s.wait().unwrap();
        }
        Err(e) => assert!(matches!(e, Error::InvalidInput(_)), "{e}"),
    }
    assert!(t.elapsed() < Duration::from_secs(30));
    // Unknown voice, damaged voice file.
    let e = speaker
        .speak(
            "hello",
            &SpeakOptions {
                voice: "xx_nobody".into(),
                speed: 1.0,
            },
            Output::Collect,
        )
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("no voice 'xx_nobody'") && e.contains("af_heart"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("af_broken.bin");
    std::fs::write(&bad, [0u8; 1000]).unwrap();
    let e = VoiceStyle::load_from("af_broken", &bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("damaged") && e.contains("af_broken.bin"), "{e}");
}
