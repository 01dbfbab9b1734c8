//! `umwelt-cli`: the engine from a terminal, on any memory file (`--db`), without a window.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use umwelt::store::DEFAULT_SCOPE;
use umwelt::{audio, bench, models, paths, speech, voice, Store};

#[derive(Parser)]
#[command(
    name = "umwelt-cli",
    version,
    about = "Umwelt's memory engine from the command line"
)]
struct Cli {
    /// The memory file to use (default: the app's own, under the user's data directory).
    #[arg(long, global = true)]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Remember a text.
    Remember {
        #[arg(long, default_value = DEFAULT_SCOPE)]
        scope: String,
        #[arg(long, default_value = "")]
        session: String,
        text: String,
    },
    /// Find memories by meaning (blended with recency).
    Recall {
        #[arg(long, default_value = DEFAULT_SCOPE)]
        scope: String,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        #[arg(long, default_value_t = 5)]
        k: usize,
        #[arg(long)]
        json: bool,
        query: String,
    },
    /// List memories, newest first.
    List {
        #[arg(long, default_value = DEFAULT_SCOPE)]
        scope: String,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Forget one memory by id.
    Delete { id: i64 },
    /// Transcribe a WAV file (any rate, mono or stereo) and print the text.
    Transcribe {
        /// Whisper's full 30 s audio context instead of one sized to the clip.
        #[arg(long)]
        full_context: bool,
        /// No temperature fallback.
        #[arg(long)]
        no_fallback: bool,
        /// Beam width (1 = greedy).
        #[arg(long, default_value_t = speech::transcriber::DEFAULT_BEAM)]
        beam: u8,
        /// Print how long whisper took.
        #[arg(long)]
        time: bool,
        file: PathBuf,
    },
    /// Dictate from the microphone: spooled to disk as it is recorded, then transcribed and
    /// remembered. Records for --seconds (or until killed: the spool is recovered next time).
    Record {
        #[arg(long)]
        device: Option<String>,
        #[arg(long)]
        seconds: Option<f32>,
        /// Where recordings go (default: the app's own recordings folder).
        #[arg(long)]
        recordings: Option<PathBuf>,
    },
    /// Turn recordings a crash or a kill left behind into memories.
    Recover {
        #[arg(long)]
        recordings: Option<PathBuf>,
    },
    /// Read a text aloud with the local voice (Kokoro), or write it to a WAV file.
    Speak {
        /// A voice id (see `umwelt-cli voices`).
        #[arg(long, default_value = voice::DEFAULT_VOICE)]
        voice: String,
        /// 0.5 (slow) to 2.0 (fast).
        #[arg(long, default_value_t = 1.0)]
        speed: f32,
        /// Write a 24 kHz WAV file instead of playing.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Play on this output device (see `umwelt-cli voices --devices`); default: the system's.
        #[arg(long)]
        device: Option<String>,
        text: String,
    },
    /// List the voices (and, with --devices, the output devices).
    Voices {
        #[arg(long)]
        devices: bool,
    },
    /// Word error rate of whisper on the committed dictation set, for one way of decoding.
    Wer {
        /// formant (espeak-ng), neural (Kokoro) or both.
        #[arg(long, default_value = "both")]
        kind: String,
        /// Beam width (1 = greedy).
        #[arg(long, default_value_t = speech::transcriber::DEFAULT_BEAM)]
        beam: u8,
        /// No temperature fallback.
        #[arg(long)]
        no_fallback: bool,
        /// Whisper's full 30 s audio context instead of one sized to the clip.
        #[arg(long)]
        full_context: bool,
        /// Pass the set's vocabulary line as whisper's initial prompt.
        #[arg(long)]
        prompt: bool,
        /// No silence in front of each clip (whisper as it comes).
        #[arg(long)]
        no_lead_in: bool,
        /// Only the first N utterances.
        #[arg(long)]
        limit: Option<usize>,
        /// A GGML whisper model file (default: tiny.en).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Print each utterance heard wrongly.
        #[arg(long)]
        verbose: bool,
    },
    /// Run the benchmark harness (on generated data in a temporary folder, never your memories).
    Bench {
        /// Only the scenarios that need no model.
        #[arg(long)]
        fast: bool,
        /// Scenarios to run, comma-separated (default: all).
        #[arg(long, value_delimiter = ',')]
        scenario: Vec<String>,
        /// Corpus sizes for the retrieval and write scenarios, comma-separated.
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<usize>,
        /// Measured iterations per scenario (default 30; fewer for whole-store rewrites).
        #[arg(long)]
        iterations: Option<usize>,
        /// Keep the numbers: write the report as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Print the results as Markdown tables (the format of docs/PERFORMANCE.md).
        #[arg(long)]
        markdown: bool,
        /// Compare with an earlier report (JSON) and print before and after side by side.
        #[arg(long)]
        compare: Option<PathBuf>,
    },
    /// Model files: check them, or convert whisper to GGML (used by scripts/setup-models.sh).
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Verify every model file the app loads against the manifest.
    Check,
    /// Convert a CTranslate2 whisper model to a GGML file for whisper.cpp.
    ConvertWhisper {
        #[arg(long)]
        ct2: PathBuf,
        /// `mel_80.npy` from openai-whisper's `mel_filters.npz`.
        #[arg(long)]
        mel: PathBuf,
        /// `gpt2.tiktoken` (English-only models) from openai-whisper.
        #[arg(long)]
        vocab: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("umwelt-cli: {e}");
            ExitCode::FAILURE
        }
    }
}

fn open(db: &Option<PathBuf>) -> umwelt::Result<Store> {
    Store::open(db.clone().unwrap_or_else(paths::default_db))
}

fn print_json<T: serde::Serialize>(v: &T) {
    println!("{}", serde_json::to_string_pretty(v).expect("serialisable"));
}

fn run(cli: Cli) -> umwelt::Result<()> {
    match cli.command {
        Command::Remember {
            scope,
            session,
            text,
        } => {
            let id = open(&cli.db)?.remember(&scope, &session, &text)?;
            println!("{id}");
        }
        Command::Recall {
            scope,
            session,
            k,
            json,
            query,
        } => {
            let hits = open(&cli.db)?.recall(&query, &scope, session.as_deref(), k)?;
            if json {
                print_json(&hits);
            } else {
                for h in hits {
                    println!("{:.3}  [{}] {}", h.score, h.memory.id, h.memory.text);
                }
            }
        }
        Command::List { scope, limit, json } => {
            let list = open(&cli.db)?.list(&scope, limit, None)?;
            if json {
                print_json(&list);
            } else {
                for m in list {
                    println!("[{}] {}", m.id, m.text);
                }
            }
        }
        Command::Delete { id } => open(&cli.db)?.delete(id)?,
        Command::Transcribe {
            full_context,
            no_fallback,
            beam,
            time,
            file,
        } => {
            let pcm = audio::read_wav_16k_mono(&file)?;
            let t = speech::Transcriber::load()?;
            let how = speech::Decoding {
                beam,
                fallback: !no_fallback,
                adapt_context: !full_context && umwelt::optimisations::enabled(),
                ..Default::default()
            };
            let t0 = std::time::Instant::now();
            println!("{}", t.transcribe_with(&pcm, &how)?);
            if time {
                eprintln!("whisper took {:.0} ms", t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        Command::Record {
            device,
            seconds,
            recordings,
        } => {
            let dir = recordings.unwrap_or_else(paths::recordings_dir);
            let ears = speech::Ears::load()?;
            let dictation = speech::Dictation::new(dir);
            let rec = dictation.start(device.as_deref(), &ears, |h| {
                eprintln!("… {} {}", h.text, h.partial);
            })?;
            eprintln!(
                "recording from {} into {}",
                rec.device(),
                rec.spool_path().display()
            );
            match seconds {
                Some(s) => {
                    rec.wait_for(s, std::time::Duration::from_secs_f32(s * 3.0 + 10.0));
                }
                None => loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                },
            }
            let draft = dictation.stop(rec)?;
            if let Some(p) = &draft.problem {
                return Err(umwelt::Error::Audio(format!(
                    "{p} (the recording is kept at {})",
                    draft.audio_path
                )));
            }
            let m = dictation.save(&draft.id, &draft.text, &open(&cli.db)?, DEFAULT_SCOPE, "")?;
            println!("[{}] {}", m.id, m.text);
        }
        Command::Wer {
            kind,
            beam,
            no_fallback,
            full_context,
            prompt,
            no_lead_in,
            limit,
            model,
            verbose,
        } => {
            use bench::dictation::{self, VoiceKind};
            let kinds = match kind.as_str() {
                "formant" => vec![VoiceKind::Formant],
                "neural" => vec![VoiceKind::Neural],
                "both" => vec![VoiceKind::Formant, VoiceKind::Neural],
                other => {
                    return Err(umwelt::Error::InvalidInput(format!(
                        "--kind is formant, neural or both, not '{other}'"
                    )))
                }
            };
            let t = match model {
                Some(p) => speech::Transcriber::load_from(&p)?,
                None => speech::Transcriber::load()?,
            };
            let how = speech::transcriber::Decoding {
                beam,
                fallback: !no_fallback,
                adapt_context: !full_context,
                vocabulary: if prompt {
                    dictation::vocabulary().into()
                } else {
                    String::new()
                },
                language: Some("en".into()),
                lead_in_s: if no_lead_in {
                    0.0
                } else {
                    speech::transcriber::LEAD_IN_S
                },
            };
            for k in kinds {
                let clips = dictation::clips(k, limit)?;
                let s = dictation::score(&t, &clips, &how)?;
                if verbose {
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
        }
        Command::Recover { recordings } => {
            let dir = recordings.unwrap_or_else(paths::recordings_dir);
            let store = open(&cli.db)?;
            let dictation = speech::Dictation::new(dir);
            let r = dictation.recover(&speech::Ears::load()?);
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
        }
        Command::Speak {
            voice: v,
            speed,
            out,
            device,
            text,
        } => {
            let opts = voice::SpeakOptions { voice: v, speed };
            let output = if out.is_some() {
                voice::Output::Collect
            } else {
                voice::Output::Device(device)
            };
            let speech = voice::Speaker::new().speak(&text, &opts, output)?;
            let r = speech.wait()?;
            if let Some(path) = out {
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
        }
        Command::Voices { devices } => {
            for v in voice::voices() {
                println!("{:<14} {:<10} {:<9} {}", v.id, v.name, v.accent, v.gender);
            }
            if devices {
                println!();
                for d in voice::output_devices()? {
                    println!("device: {d}");
                }
            }
        }
        Command::Bench {
            fast,
            scenario,
            sizes,
            iterations,
            json,
            markdown,
            compare,
        } => {
            let before = match &compare {
                Some(p) => Some(bench::parse_report(&std::fs::read_to_string(p).map_err(
                    |e| umwelt::Error::Io {
                        context: format!("reading {}", p.display()),
                        source: e,
                    },
                )?)?),
                None => None,
            };
            let config = bench::BenchConfig {
                scenarios: scenario,
                sizes,
                fast,
                iterations,
                warmup: None,
            };
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let report = bench::run(
                &config,
                &mut |p| {
                    if !p.scenario.is_empty() {
                        eprintln!(
                            "[{}/{}] {} (size {})",
                            p.done + 1,
                            p.total,
                            p.scenario,
                            p.size
                        );
                    }
                },
                &cancel,
            )?;
            if markdown {
                print!("{}", bench::render_markdown(&report));
            } else {
                print!("{}", bench::render_table(&report));
            }
            if let Some(b) = before {
                println!("\nbefore → after ({}):", compare.unwrap().display());
                print!("{}", bench::render_compare(&b, &report));
            }
            if let Some(p) = json {
                std::fs::write(
                    &p,
                    serde_json::to_string_pretty(&report).expect("serialisable"),
                )
                .map_err(|e| umwelt::Error::Io {
                    context: format!("writing {}", p.display()),
                    source: e,
                })?;
                eprintln!("wrote {}", p.display());
            }
        }
        Command::Models {
            command: ModelsCommand::Check,
        } => {
            let mut bad = 0;
            for (name, r) in models::check_all() {
                match r {
                    Ok(p) => println!("ok       {name}  ({})", p.display()),
                    Err(e) => {
                        bad += 1;
                        println!("PROBLEM  {name}: {e}");
                    }
                }
            }
            if bad > 0 {
                return Err(umwelt::Error::InvalidInput(format!(
                    "{bad} model file(s) are missing or damaged"
                )));
            }
        }
        Command::Models {
            command:
                ModelsCommand::ConvertWhisper {
                    ct2,
                    mel,
                    vocab,
                    out,
                },
        } => {
            let h = models::whisper_ggml::convert_files(&ct2, &mel, &vocab, &out)?;
            eprintln!(
                "wrote {} ({} audio layers, {} text layers, vocabulary {})",
                out.display(),
                h.n_audio_layer,
                h.n_text_layer,
                h.n_vocab
            );
        }
    }
    Ok(())
}
