//! `transcribe`, `record`, `recover`, `wer`: speech to text.

use std::path::PathBuf;

use umwelt::bench::{self, dictation, dictation::VoiceKind};
use umwelt::speech::file;
use umwelt::store::DEFAULT_SCOPE;
use umwelt::{paths, speech, Error, Result};

use crate::args::{RecordArgs, RecoverArgs, TranscribeArgs, WerArgs};
use crate::memory::open;

pub fn transcribe(a: TranscribeArgs) -> Result<()> {
    let t = speech::Transcriber::load_model(&a.model)?;
    let how = speech::Decoding {
        beam: a.beam,
        fallback: !a.no_fallback,
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let shown = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let heard = speech::transcribe_file(&a.file, &t, &how, cancel, |p| {
        if shown && p.total_s > 0.0 {
            eprint!("\r{:.0} % ", 100.0 * p.done_s / p.total_s);
        }
    })?;
    if shown {
        eprint!("\r");
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&heard).map_err(|e| Error::InvalidInput(e.to_string()))?
        );
    } else if a.segments {
        for s in &heard.segments {
            println!(
                "[{} → {}] {}",
                file::clock(s.start_ms),
                file::clock(s.end_ms),
                s.text
            );
        }
    } else {
        println!("{}", heard.text());
    }
    if let Some(p) = &heard.problem {
        eprintln!("note: {p}");
    }
    if a.time {
        let took = t0.elapsed().as_secs_f64();
        eprintln!(
            "{:.1} s of audio in {:.2} s: {:.1}x real time",
            heard.seconds,
            took,
            heard.seconds as f64 / took.max(1e-9)
        );
    }
    Ok(())
}

pub fn record(db: &Option<PathBuf>, a: RecordArgs) -> Result<()> {
    let dir = a.recordings.unwrap_or_else(paths::recordings_dir);
    let ears = speech::Ears::load()?;
    let dictation = speech::Dictation::new(dir);
    let rec = dictation.start(a.device.as_deref(), &ears, |h| {
        eprintln!("… {} {}", h.text, h.partial);
    })?;
    eprintln!(
        "recording from {} into {}",
        rec.device(),
        rec.spool_path().display()
    );
    match a.seconds {
        Some(s) => {
            rec.wait_for(s, std::time::Duration::from_secs_f32(s * 3.0 + 10.0));
        }
        None => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
    }
    let draft = dictation.stop(rec)?;
    if let Some(p) = &draft.problem {
        return Err(Error::Audio(format!(
            "{p} (the recording is kept at {})",
            draft.audio_path
        )));
    }
    let m = dictation.save(&draft.id, &draft.text, &open(db)?, DEFAULT_SCOPE, "")?;
    println!("[{}] {}", m.id, m.text);
    Ok(())
}

pub fn recover(db: &Option<PathBuf>, a: RecoverArgs) -> Result<()> {
    let dir = a.recordings.unwrap_or_else(paths::recordings_dir);
    let store = open(db)?;
    let dictation = speech::Dictation::new(dir);
    let r = dictation.recover(&speech::Ears::load, &store);
    for d in &r.recovered {
        match &d.problem {
            None => {
                let m = dictation.save(&d.id, &d.text, &store, DEFAULT_SCOPE, "")?;
                println!("recovered [{}] {}", m.id, m.text);
            }
            Some(p) => eprintln!(
                "umwelt-cli: {p} (the recording is kept at {})",
                d.audio_path
            ),
        }
    }
    for p in &r.problems {
        eprintln!("umwelt-cli: {p}");
    }
    if r.recovered.is_empty() && r.problems.is_empty() {
        eprintln!("nothing to recover");
    }
    Ok(())
}

pub fn wer(a: WerArgs) -> Result<()> {
    let kinds = match a.kind.as_str() {
        "formant" => vec![VoiceKind::Formant],
        "neural" => vec![VoiceKind::Neural],
        "both" => vec![VoiceKind::Formant, VoiceKind::Neural],
        other => {
            return Err(Error::InvalidInput(format!(
                "--kind is formant, neural or both, not '{other}'"
            )))
        }
    };
    let t = match a.model {
        Some(p) => speech::Transcriber::load_from(&p)?,
        None => speech::Transcriber::load()?,
    };
    let how = speech::transcriber::Decoding {
        beam: a.beam,
        fallback: !a.no_fallback,
        adapt_context: !a.full_context,
        vocabulary: if a.prompt {
            dictation::vocabulary().into()
        } else {
            String::new()
        },
        language: Some("en".into()),
        lead_in_s: if a.no_lead_in {
            0.0
        } else {
            speech::transcriber::LEAD_IN_S
        },
    };
    for k in kinds {
        let clips = dictation::clips(k, a.limit)?;
        let s = dictation::score(&t, &clips, &how)?;
        if a.verbose {
            for (c, h) in clips.iter().zip(&s.heard) {
                if speech::wer::word_error_rate(c.text, h) > 0.0 {
                    println!("  [{}] {:?}\n      heard {:?}", c.voice, c.text, h);
                }
            }
        }
        let mut ms = s.ms.clone();
        ms.sort_by(f64::total_cmp);
        println!(
            "{:<20} {} clips  WER {:.1} %  whisper ms p50 {:.0} p95 {:.0} p99 {:.0}",
            k.name(),
            clips.len(),
            s.wer * 100.0,
            bench::percentile(&ms, 50.0),
            bench::percentile(&ms, 95.0),
            bench::percentile(&ms, 99.0),
        );
    }
    Ok(())
}
