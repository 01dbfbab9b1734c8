//! A microphone that stops sending sound mid-recording (unplugged, or its driver hung), through
//! the real cpal path: an ALSA file device reading a FIFO whose writer goes quiet. The recorder
//! notices, says why, and stopping (without waiting for the hung device) keeps everything captured
//! before it.
//! (Own process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once.)

mod common;

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use umwelt::speech::{recorder, spool, Recorder};

#[test]
fn a_microphone_that_goes_quiet_is_noticed_and_what_it_sent_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("mic.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    common::file_microphone(dir.path(), &fifo);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());

    // The "microphone": 1.5 s of a tone at the pace of speech, then nothing (the writer keeps the
    // FIFO open, as a hung device would), until the test lets it go.
    let sent_s = 1.5f32;
    let (unplug_tx, unplug_rx) = mpsc::channel::<()>();
    let writer_fifo = fifo.clone();
    let writer = std::thread::spawn(move || {
        // Opening a FIFO for writing waits for the reader: the recorder opening the device.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(writer_fifo)
            .unwrap();
        let t0 = Instant::now();
        let chunk = 1_600; // 100 ms
        for i in 0..(sent_s * 10.0) as usize {
            let bytes: Vec<u8> = (0..chunk)
                .flat_map(|k| {
                    let t = (i * chunk + k) as f32 / 16_000.0;
                    (((t * 440.0 * std::f32::consts::TAU).sin() * 8_000.0) as i16).to_le_bytes()
                })
                .collect();
            f.write_all(&bytes).unwrap();
            let due = Duration::from_millis(100 * (i as u64 + 1));
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let _ = unplug_rx.recv_timeout(Duration::from_secs(60));
    });

    let rec = Recorder::start(None, &dir.path().join("recordings"), None).unwrap();
    assert!(rec.lost().is_none(), "a fresh recording is not lost");
    let t0 = Instant::now();
    let why = loop {
        if let Some(why) = rec.lost() {
            break why;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the recorder never noticed the microphone went quiet ({} s captured)",
            rec.captured_seconds()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // Noticed within the stall time of the sound stopping (plus slack for a busy machine).
    assert!(
        t0.elapsed() >= recorder::STALL,
        "noticed after {:?}, before the stall time",
        t0.elapsed()
    );
    assert!(why.contains("unplugged"), "{why}");
    let captured = rec.captured_seconds();
    assert!(captured >= sent_s - 0.1, "only {captured} s captured");

    // Stopping does not wait for the hung device for ever.
    let t1 = Instant::now();
    let recording = rec.stop().unwrap();
    assert!(
        t1.elapsed() < Duration::from_secs(10),
        "stopping waited {:?} for a hung device",
        t1.elapsed()
    );
    drop(unplug_tx);
    writer.join().unwrap();
    let audio = spool::read(&recording.spool).unwrap();
    let seconds = audio.samples.len() as f32 / audio.rate as f32;
    assert!(
        seconds >= sent_s - 0.1,
        "the spool kept {seconds} s of the {sent_s} s sent"
    );
    let loud = audio.samples.iter().filter(|x| x.abs() > 0.1).count();
    assert!(
        loud as f32 / audio.rate as f32 >= (sent_s - 0.1) * 0.5,
        "the tone is not in the spool"
    );
}
