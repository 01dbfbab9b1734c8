//! Streamed playback, timed like a real device: first through the paced consumer the harness
//! uses, then through the real rodio → cpal → ALSA path into a FIFO that a reader drains at
//! exactly real-time pace (an ALSA `file` device writing into a pipe: the pipe's back-pressure
//! paces the device the way a sound card's clock would).
//! One test, one process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once, and timing checks
//! must not share two cores with other tests.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use umwelt::voice::{self, Output, SpeakOptions, Speaker, SAMPLE_RATE};

use crate::common;

const TEXT: &str = "Remember to buy milk and bread on the way home. The meeting with Anna moved to Friday afternoon. \
                    Call the plumber about the dripping tap in the bathroom. The parking spot is on level three, next to the lift.";

/// Longest run of near-silence strictly inside the speech, in seconds.
fn longest_inner_silence(s: &[f32]) -> f64 {
    let loud = |x: &f32| x.abs() > 0.002;
    let (Some(a), Some(b)) = (s.iter().position(loud), s.iter().rposition(loud)) else {
        return f64::INFINITY;
    };
    let (mut run, mut best) = (0usize, 0usize);
    for x in &s[a..=b] {
        if loud(x) {
            run = 0;
        } else {
            run += 1;
            best = best.max(run);
        }
    }
    best as f64 / SAMPLE_RATE as f64
}

fn paced_playback_has_no_gaps(speaker: &Speaker) {
    let r = speaker
        .speak(TEXT, &SpeakOptions::default(), Output::Paced)
        .unwrap()
        .wait()
        .unwrap();
    eprintln!("paced: {r:?}");
    assert_eq!(r.underruns, 0, "the queue ran dry between phrases: {r:?}");
    assert!(
        r.phrases >= 4 && r.first_audio_ms.is_some() && !r.stopped,
        "{r:?}"
    );
    assert!(
        r.samples.len() as f64 / SAMPLE_RATE as f64 >= r.audio_seconds * 0.6,
        "{r:?}"
    );
    let gap = longest_inner_silence(&r.samples);
    assert!(gap < 0.6, "a {gap:.2} s hole inside the speech");
}

/// An asoundrc whose default playback device writes S16_LE 24 kHz mono into `fifo`.
fn fifo_speaker(dir: &std::path::Path, fifo: &std::path::Path) {
    std::fs::create_dir_all(dir.join("alsa")).unwrap();
    let conf = format!(
        r#"pcm.!default {{
  type plug
  slave {{
    pcm {{ type file slave.pcm "null" file "{}" format "raw" }}
    format S16_LE
    rate 24000
    channels 1
  }}
}}
"#,
        fifo.display()
    );
    std::fs::write(dir.join("alsa/asoundrc"), conf).unwrap();
    std::env::set_var("XDG_CONFIG_HOME", dir);
}

/// Read the FIFO at 24 000 samples a second, 10 ms at a time, until the writer closes it.
fn paced_reader(fifo: std::path::PathBuf) -> std::thread::JoinHandle<Vec<f32>> {
    std::thread::spawn(move || {
        let mut f = std::fs::File::open(&fifo).unwrap();
        // One page of pipe buffer (85 ms) instead of 64 KiB, so the pace is the reader's.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
        let start = Instant::now();
        let mut bytes = Vec::new();
        let mut buf = [0u8; 480];
        loop {
            match f.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
            }
            let due =
                start + Duration::from_secs_f64(bytes.len() as f64 / (2.0 * SAMPLE_RATE as f64));
            if let Some(w) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(w);
            }
        }
        bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
            .collect()
    })
}

fn device_playback_reaches_the_device_whole(speaker: &Speaker) {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("speaker.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    fifo_speaker(dir.path(), &fifo);
    assert!(!voice::output_devices().unwrap().is_empty());
    let reader = paced_reader(fifo.clone());

    let r = speaker
        .speak(TEXT, &SpeakOptions::default(), Output::Device(None))
        .unwrap()
        .wait()
        .unwrap();
    eprintln!("device: {r:?}");
    let heard = reader.join().unwrap();
    let secs = heard.len() as f64 / SAMPLE_RATE as f64;
    eprintln!("the device received {secs:.2} s");
    assert_eq!(r.underruns, 0, "{r:?}");
    assert!(r.first_audio_ms.is_some(), "{r:?}");
    // All of it arrived (trimmed edges and added pauses make it differ a little from the model's
    // own length), it is not silence, and nothing fell out in the middle.
    assert!(
        secs > r.audio_seconds * 0.6 && secs < r.audio_seconds * 1.5 + 1.0,
        "{secs} s for {r:?}"
    );
    let peak = heard.iter().fold(0f32, |m, x| m.max(x.abs()));
    assert!(peak > 0.05, "silent output (peak {peak})");
    let gap = longest_inner_silence(&heard);
    assert!(gap < 0.6, "a {gap:.2} s hole inside what the device played");

    // A speaker that is not there gives a clear message.
    let e = speaker
        .speak(
            "hello",
            &SpeakOptions::default(),
            Output::Device(Some("no such speaker".into())),
        )
        .unwrap()
        .wait()
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not connected"), "{e}");
}

#[test]
fn streamed_speech_plays_whole_and_without_gaps() {
    if common::own_process!() {
        return;
    }
    let speaker = Speaker::new();
    speaker
        .warm_up(voice::DEFAULT_VOICE)
        .expect("run scripts/setup-models.sh first");
    paced_playback_has_no_gaps(&speaker);
    device_playback_reaches_the_device_whole(&speaker);
}
