//! `umwelt-cli`: the engine from a terminal, on any memory file (`--db`), without a window.
//!
//! `args.rs` declares the commands and their flags; each command is one function in the file of
//! its area (`memory.rs`, `agents.rs` (the MCP server), `holdings.rs` (who holds what), `speech.rs`, `voice.rs`, `bench.rs`, `models.rs`).

mod agents;
mod args;
mod bench;
mod exchange;
mod holdings;
mod memory;
mod models;
mod speech;
mod voice;

use std::process::ExitCode;

use args::{ClaimCommand, Cli, Command, DraftCommand, HolderCommand, ModelsCommand};
use clap::Parser;
use umwelt::store::conversion::Direction;

fn main() -> ExitCode {
    // The harness's memory scenarios start this program again to measure a fresh process.
    umwelt::bench::memory_probe::run_if_asked();
    // What the CLI creates (the memory file, recordings, drafts, exports) is the user's alone.
    umwelt::paths::private_umask();
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
    let db = &cli.file;
    match cli.command {
        Command::Remember(a) => memory::remember(db, a),
        Command::Recall(a) => memory::recall(db, a),
        Command::Search(a) if a.holder.is_some() || a.narrator => holdings::search(db, a),
        Command::Search(a) => memory::search(db, a),
        Command::Edit(a) => memory::edit(db, a),
        Command::Import(a) => exchange::import(db, a),
        Command::Export(a) => exchange::export(db, a),
        Command::List(a) => memory::list(db, a),
        Command::Delete(a) => memory::delete(db, a),
        Command::Transcribe(a) => speech::transcribe(a),
        Command::Record(a) => speech::record(db, a),
        Command::Recover(a) => speech::recover(db, a),
        Command::Type(a) => speech::type_text(a),
        Command::Wer(a) => speech::wer(a),
        Command::Speak(a) => voice::speak(a),
        Command::Voices(a) => voice::voices(a),
        Command::Bench(a) => bench::bench(a),
        Command::Notebook(a) => bench::notebook(db, a),
        Command::Holder {
            command: HolderCommand::Add { name },
        } => holdings::holder_add(db, &name),
        Command::Claim {
            command: ClaimCommand::Add(a),
        } => holdings::claim_add(db, a),
        Command::Tell(a) => holdings::tell(db, a),
        Command::Witness(a) => holdings::witness(db, a),
        Command::Adjust(a) => holdings::adjust(db, a),
        Command::Holds(a) => holdings::holds(db, a),
        Command::WhoHolds(a) => holdings::who_holds(db, a),
        Command::Holdings(a) => holdings::holdings(db, a),
        Command::Draft { command } => match command {
            DraftCommand::Open { parent } => holdings::draft_open(db, parent),
            DraftCommand::Merge { draft } => holdings::draft_merge(db, draft),
            DraftCommand::Discard { draft } => holdings::draft_discard(db, draft),
        },
        Command::Town(a) => holdings::town(db, a),
        Command::Mcp(a) => agents::mcp(db, a),
        Command::Encrypt => memory::convert(db, Direction::Encrypt),
        Command::Decrypt => memory::convert(db, Direction::Decrypt),
        Command::Models { command } => match command {
            ModelsCommand::Check => models::check(),
            ModelsCommand::ConvertWhisper(a) => models::convert_whisper(a),
        },
    }
}
