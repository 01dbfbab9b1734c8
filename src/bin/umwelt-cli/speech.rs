//! `transcribe`, `record`, `recover`, `wer`: speech to text.

use std::path::PathBuf;

use umwelt::bench::{self, dictation, dictation::VoiceKind};
use umwelt::speech::file;
use umwelt::store::DEFAULT_SCOPE;
use umwelt::{speech, Error, Result, Store};

use crate::args::{MemoryFile, RecordArgs, RecoverArgs, TranscribeArgs, TypeArgs, WerArgs};
use crate::memory::open;

pub(crate) fn transcribe(a: TranscribeArgs) -> Result<()> {
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

/// The memory file, with the recordings folder the dictation uses: `--recordings`, else
/// `recordings/` beside the memory file (the app's own folder for the app's own file).
fn open_with_recordings(db: &MemoryFile, recordings: Option<PathBuf>) -> Result<Store> {
    let store = open(db)?;
    Ok(match recordings {
        Some(dir) => store.with_recordings_dir(dir),
        None => store,
    })
}

pub(crate) fn record(db: &MemoryFile, a: RecordArgs) -> Result<()> {
    let store = open_with_recordings(db, a.recordings)?;
    let ears = speech::Ears::load()?;
    let dictation =
        speech::DictationDrafts::new(store.recordings_dir()).sealing_with(store.seal()?);
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
    let m = dictation.save(&draft.id, &draft.text, &store, DEFAULT_SCOPE, "")?;
    println!("[{}] {}", m.id, m.text);
    if a.type_it {
        // Kept as a memory first: a failure to type loses nothing.
        umwelt::typing::type_text(&m.text).map_err(|e| match e {
            Error::NotTyped(why) => {
                Error::NotTyped(format!("{why}. The dictation is kept as memory {}", m.id))
            }
            e => e,
        })?;
    }
    Ok(())
}

/// `type TEXT`: into the focused window.
pub(crate) fn type_text(a: TypeArgs) -> Result<()> {
    let how = umwelt::typing::type_text(&a.text)?;
    eprintln!(
        "typed {} characters with {}",
        a.text.chars().count(),
        how.describe()
    );
    Ok(())
}

pub(crate) fn recover(db: &MemoryFile, a: RecoverArgs) -> Result<()> {
    let store = open_with_recordings(db, a.recordings)?;
    let dictation =
        speech::DictationDrafts::new(store.recordings_dir()).sealing_with(store.seal()?);
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

/// `--score`: the corpus word error rate, per kind, of a TSV of kind, text, heard.
fn score_file(path: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        context: format!("reading {}", path.display()),
        source,
    })?;
    let mut kinds: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let [kind, reference, heard] = cols[..] else {
            return Err(Error::InvalidInput(format!(
                "{} line {}: a line is kind, text and heard, separated by tabs",
                path.display(),
                n + 1
            )));
        };
        let pair = (reference.to_string(), heard.to_string());
        match kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, pairs)) => pairs.push(pair),
            None => kinds.push((kind.to_string(), vec![pair])),
        }
    }
    for (kind, pairs) in kinds {
        let wer = speech::wer::corpus_wer(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        println!("{kind}\t{}\t{:.4}", pairs.len(), wer * 100.0);
    }
    Ok(())
}

/// Tabs and line ends out of a field of `umwelt.tsv`.
fn field(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

pub(crate) fn wer(a: WerArgs) -> Result<()> {
    if let Some(path) = &a.score {
        return score_file(path);
    }
    let mut table = String::new();
    if let Some(dir) = &a.clips_out {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            context: format!("making {}", dir.display()),
            source,
        })?;
    }
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
        if let Some(dir) = &a.clips_out {
            let short = if k == VoiceKind::Formant {
                "formant"
            } else {
                "neural"
            };
            for (i, (c, (ms, heard))) in clips.iter().zip(s.ms.iter().zip(&s.heard)).enumerate() {
                let file = format!("{short}-{i:02}.wav");
                umwelt::audio::write_wav_16k_mono(&dir.join(&file), &c.pcm)?;
                table += &format!(
                    "{short}\t{file}\t{ms:.3}\t{}\t{}\n",
                    field(c.text),
                    field(heard)
                );
            }
        }
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
    if let Some(dir) = &a.clips_out {
        let path = dir.join("umwelt.tsv");
        std::fs::write(&path, table).map_err(|source| Error::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
    }
    Ok(())
}
