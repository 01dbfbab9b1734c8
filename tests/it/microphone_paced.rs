//! A microphone that sends sound at the pace of speech, through the real cpal path: an ALSA file
//! device reading a FIFO that a writer thread feeds in real time. First Settings' level check
//! (a device opened only to show its level); then a recording whose microphone stops sending
//! (unplugged, or its driver hung): the recorder notices, says why, and stopping (without
//! waiting for the hung device) keeps everything captured before it.
//! (One test, own process: ALSA reads `$XDG_CONFIG_HOME/alsa/asoundrc` once.)

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use umwelt::speech::{recorder, spool, Monitor, Recorder};

use crate::common;

const CHUNK: usize = 1_600; // 100 ms at 16 kHz

/// 100 ms of a 440 Hz tone at a quarter of full scale, as the FIFO wants it (S16_LE).
fn tone(i: usize) -> Vec<u8> {
    (0..CHUNK)
        .flat_map(|k| {
            let t = (i * CHUNK + k) as f32 / 16_000.0;
            (((t * 440.0 * std::f32::consts::TAU).sin() * 8_000.0) as i16).to_le_bytes()
        })
        .collect()
}

/// Write chunk `i` and wait until it is due (real time from `t0`); false once the reader is gone.
fn paced(f: &mut std::fs::File, i: usize, t0: Instant) -> bool {
    if f.write_all(&tone(i)).is_err() {
        return false;
    }
    let due = Duration::from_millis(100 * (i as u64 + 1));
    if let Some(wait) = due.checked_sub(t0.elapsed()) {
        std::thread::sleep(wait);
    }
    true
}

#[test]
fn the_level_check_and_a_microphone_that_goes_quiet() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("mic.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    common::file_microphone(dir.path(), &fifo);
    std::env::set_var("XDG_CONFIG_HOME", dir.path());

    // The "microphone". First opening (the level check): a tone until the device is closed.
    // Second opening (the recording): 1.5 s of the tone, then nothing (the writer keeps the FIFO
    // open, as a hung device would), until the test lets it go.
    let sent_s = 1.5f32;
    let (unplug_tx, unplug_rx) = mpsc::channel::<()>();
    let (checked_tx, checked_rx) = mpsc::channel::<()>();
    let (between_tx, between_rx) = mpsc::channel::<()>();
    let writer_fifo = fifo.clone();
    let writer = std::thread::spawn(move || {
        // Opening a FIFO for writing waits for the reader: the device being opened.
        let open = || {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&writer_fifo)
                .unwrap()
        };
        let mut f = open();
        let t0 = Instant::now();
        let mut i = 0;
        while checked_rx.try_recv().is_err() && paced(&mut f, i, t0) && i < 600 {
            i += 1;
        }
        // Closed before the recording opens the FIFO, so that it reads only what follows.
        drop(f);
        between_tx.send(()).unwrap();
        let mut f = open();
        let t0 = Instant::now();
        for i in 0..(sent_s * 10.0) as usize {
            assert!(
                paced(&mut f, i, t0),
                "the recorder closed the microphone early"
            );
        }
        let _ = unplug_rx.recv_timeout(Duration::from_secs(60));
    });

    // Settings' level check: the level follows the sound, and nothing is written anywhere.
    let monitor = Monitor::open(None).unwrap();
    let t0 = Instant::now();
    let mut loudest = 0f32;
    while t0.elapsed() < Duration::from_secs(10) && loudest < 0.2 {
        loudest = loudest.max(monitor.level());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(loudest >= 0.2, "the level never showed the tone: {loudest}");
    assert!(monitor.lost().is_none(), "{:?}", monitor.lost());
    drop(monitor);
    checked_tx.send(()).unwrap();
    between_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "only the FIFO and alsa/"
    );

    // A recording whose microphone goes quiet.
    let rec = Recorder::start(None, &dir.path().join("recordings"), None, None).unwrap();
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
    let audio = spool::read(&recording.spool, None).unwrap();
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
