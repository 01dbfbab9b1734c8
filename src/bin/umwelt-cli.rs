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
    Transcribe { file: PathBuf },
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
        Command::Transcribe { file } => {
            let pcm = audio::read_wav_16k_mono(&file)?;
            println!("{}", speech::Transcriber::load()?.transcribe(&pcm)?);
        }
        Command::Record {
            device,
            seconds,
            recordings,
        } => {
            let dir = recordings.unwrap_or_else(paths::recordings_dir);
            let rec = speech::Recorder::start(device.as_deref(), &dir)?;
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
            let recording = rec.stop()?;
            let store = open(&cli.db)?;
            let m = speech::Dictation::new(dir).finish_spool(
                &recording.spool,
                &speech::Transcriber::load()?,
                &store,
                DEFAULT_SCOPE,
                "",
            )?;
            println!("[{}] {}", m.id, m.text);
        }
        Command::Recover { recordings } => {
            let dir = recordings.unwrap_or_else(paths::recordings_dir);
            let store = open(&cli.db)?;
            let r = speech::Dictation::new(dir).recover(
                &speech::Transcriber::load()?,
                &store,
                DEFAULT_SCOPE,
            );
            for m in &r.recovered {
                println!("recovered [{}] {}", m.id, m.text);
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
