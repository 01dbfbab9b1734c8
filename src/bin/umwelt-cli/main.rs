//! `umwelt-cli`: the engine from a terminal, on any memory file (`--db`), without a window.
//!
//! `args.rs` declares the commands and their flags; each command is one function in the file of
//! its area (`memory.rs`, `speech.rs`, `voice.rs`, `bench.rs`, `models.rs`).

mod args;
mod bench;
mod exchange;
mod memory;
mod models;
mod speech;
mod voice;

use std::process::ExitCode;

use args::{Cli, Command, ModelsCommand};
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The engine's warnings (a file it could not remove, a damaged file set aside) on stderr.
    let _already = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_target(false)
        .without_time()
        .try_init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("umwelt-cli: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> umwelt::Result<()> {
    let db = &cli.db;
    match cli.command {
        Command::Remember(a) => memory::remember(db, a),
        Command::Recall(a) => memory::recall(db, a),
        Command::Search(a) => memory::search(db, a),
        Command::Edit(a) => memory::edit(db, a),
        Command::Import(a) => exchange::import(db, a),
        Command::Export(a) => exchange::export(db, a),
        Command::List(a) => memory::list(db, a),
        Command::Delete(a) => memory::delete(db, a),
        Command::Transcribe(a) => speech::transcribe(a),
        Command::Record(a) => speech::record(db, a),
        Command::Recover(a) => speech::recover(db, a),
        Command::Wer(a) => speech::wer(a),
        Command::Speak(a) => voice::speak(a),
        Command::Voices(a) => voice::voices(a),
        Command::Bench(a) => bench::bench(a),
        Command::Notebook(a) => bench::notebook(db, a),
        Command::Models { command } => match command {
            ModelsCommand::Check => models::check(),
            ModelsCommand::ConvertWhisper(a) => models::convert_whisper(a),
        },
    }
}
