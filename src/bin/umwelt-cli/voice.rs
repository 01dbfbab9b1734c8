//! `speak`, `voices`: reading aloud.

use umwelt::{voice, Result};

use crate::args::{SpeakArgs, VoicesArgs};

pub(crate) fn speak(a: SpeakArgs) -> Result<()> {
    if a.tokens {
        let (phonemes, ids, file) = voice::Speaker::new().first_phrase(&a.text, &a.voice)?;
        let out = serde_json::json!({ "phonemes": phonemes, "ids": ids, "voice_file": file });
        println!("{out}");
        return Ok(());
    }
    let opts = voice::SpeakOptions {
        voice: a.voice,
        speed: a.speed,
    };
    let output = if a.out.is_some() {
        voice::Output::Collect
    } else {
        voice::Output::Device(a.device)
    };
    let speech = voice::Speaker::new().speak(&a.text, &opts, output)?;
    let r = speech.wait()?;
    if let Some(path) = a.out {
        voice::write_wav(&path, &r.samples)?;
        eprintln!(
            "wrote {} ({:.2} s of speech)",
            path.display(),
            r.samples.len() as f64 / voice::SAMPLE_RATE as f64
        );
    }
    eprintln!(
        "{} phrases, {:.2} s of speech, synthesis {:.0} ms (real-time factor {:.2}){}{}",
        r.phrases,
        r.audio_seconds,
        r.synth_ms,
        r.rtf,
        r.first_audio_ms
            .map(|ms| format!(", first sound after {ms:.0} ms"))
            .unwrap_or_default(),
        if r.underruns > 0 {
            format!(", {} underruns", r.underruns)
        } else {
            String::new()
        }
    );
    Ok(())
}

pub(crate) fn voices(a: VoicesArgs) -> Result<()> {
    for v in voice::voices() {
        println!("{:<14} {:<10} {:<9} {}", v.id, v.name, v.accent, v.gender);
    }
    if a.devices {
        println!();
        for d in voice::output_devices()? {
            println!("device: {d}");
        }
    }
    Ok(())
}
