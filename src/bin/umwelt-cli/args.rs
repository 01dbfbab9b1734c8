//! The command line: every command and flag (clap), nothing run here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use umwelt::store::DEFAULT_SCOPE;
use umwelt::{speech, voice};

#[derive(Parser)]
#[command(
    name = "umwelt-cli",
    version,
    about = "Umwelt's memory engine from the command line"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub file: MemoryFile,
    #[command(subcommand)]
    pub command: Command,
}

/// Which memory file, and what opens it: options every command takes.
#[derive(Args)]
pub(crate) struct MemoryFile {
    /// The memory file to use (default: the app's own, under the user's data directory).
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
    /// The memory file is encrypted with the passphrase in FILE (its one line); a new memory
    /// file is made encrypted with it. Without it, the file must be plain.
    #[arg(long, global = true, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Remember a text.
    Remember(RememberArgs),
    /// Find memories by meaning (blended with recency).
    Recall(RecallArgs),
    /// Search by words and by meaning at once (hybrid); --explain says why each hit ranked.
    Search(SearchArgs),
    /// Replace a memory's text (the old text is kept as a version); --versions lists them,
    /// --restore V brings one back.
    Edit(EditArgs),
    /// Import notes: .md / .txt files or folders of them, or Umwelt's JSON exports. All or
    /// nothing: a failed import writes nothing and exits 1.
    Import(ImportArgs),
    /// Export every memory: --json FILE (lossless) or --markdown DIR (one file per memory).
    Export(ExportArgs),
    /// List memories, newest first.
    List(ListArgs),
    /// Forget one memory by id.
    Delete(DeleteArgs),
    /// Transcribe a WAV file (any rate, mono or stereo) and print the text.
    Transcribe(TranscribeArgs),
    /// Dictate from the microphone: spooled to disk as it is recorded, then transcribed and
    /// remembered. Records for --seconds (or until killed: the spool is recovered next time).
    Record(RecordArgs),
    /// Type a text into the focused window as if typed on the keyboard (X11: XTest; Wayland:
    /// wtype), for scripts and tests; `record --type` dictates straight into it.
    Type(TypeArgs),
    /// Turn recordings a crash or a kill left behind into memories.
    Recover(RecoverArgs),
    /// Read a text aloud with the local voice (Kokoro), or write it to a WAV file.
    Speak(SpeakArgs),
    /// List the voices (and, with --devices, the output devices).
    Voices(VoicesArgs),
    /// Word error rate of whisper on the committed dictation set, for one way of decoding.
    Wer(WerArgs),
    /// Run the benchmark harness (on generated data in a temporary folder, never your memories).
    Bench(BenchArgs),
    /// Fill a new memory file with N generated notes (seeded; everyday words, random vectors,
    /// two years, sessions, every source), to see and measure the app at scale.
    Notebook(NotebookArgs),
    /// Holders: `holder add NAME` adds one (or finds it) and prints its id.
    Holder {
        #[command(subcommand)]
        command: HolderCommand,
    },
    /// Claims: `claim add --holder H TEXT` writes one (embedded) and prints its id.
    Claim {
        #[command(subcommand)]
        command: ClaimCommand,
    },
    /// A holder tells another a claim it holds; the listener holds it as told, with the teller.
    Tell(TellArgs),
    /// Holders come to hold a claim by witnessing it.
    Witness(WitnessArgs),
    /// Set how strongly a holder holds a claim (0 to 1); the text never changes.
    Adjust(AdjustArgs),
    /// Whether a holder holds a claim: prints true or false (exit 0 either way).
    Holds(HoldsArgs),
    /// Who holds a claim: holder, how, from whom, since, strength.
    WhoHolds(WhoHoldsArgs),
    /// A page of holdings of a holder or about an entity, newest first, with the next cursor.
    Holdings(HoldingsArgs),
    /// Drafts: open (on main or --parent), merge into the parent, or discard.
    Draft {
        #[command(subcommand)]
        command: DraftCommand,
    },
    /// Build the generated town (40 holders, 100 claims and 50 tellings a day) into a new file.
    Town(TownArgs),
    /// Serve the memory to the user's own agents over the Model Context Protocol (stdio): start
    /// it from an MCP client. The writing tools (remember, forget) are offered only when
    /// Settings → Agents allows them, and never with --read-only.
    Mcp(McpArgs),
    /// Encrypt a plain memory file in place with the passphrase of --passphrase-file (SQLCipher),
    /// and its recordings (`recordings/` beside it). No other program may have the file open;
    /// a kill at any moment loses nothing.
    Encrypt,
    /// Make an encrypted memory file plain again, in place (--passphrase-file opens it), and its
    /// recordings.
    Decrypt,
    /// Model files: check them, or convert whisper to GGML (used by scripts/setup-models.sh).
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
}

#[derive(Args)]
pub(crate) struct McpArgs {
    /// Offer only the reading tools, whatever Settings → Agents says.
    #[arg(long)]
    pub read_only: bool,
}

#[derive(Args)]
pub(crate) struct RememberArgs {
    #[arg(long, default_value = DEFAULT_SCOPE)]
    pub scope: String,
    #[arg(long, default_value = "")]
    pub session: String,
    pub text: String,
}

#[derive(Args)]
pub(crate) struct RecallArgs {
    #[arg(long, default_value = DEFAULT_SCOPE)]
    pub scope: String,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    #[arg(long)]
    pub json: bool,
    pub query: String,
}

#[derive(Args)]
pub(crate) struct SearchArgs {
    #[arg(long, default_value = DEFAULT_SCOPE)]
    pub scope: String,
    /// Search the claims this holder holds (who-holds-what), instead of a scope's memories.
    #[arg(long, conflicts_with_all = ["narrator", "session"])]
    pub holder: Option<String>,
    /// Search every fact and event, whoever holds it.
    #[arg(long, conflicts_with = "session")]
    pub narrator: bool,
    /// Read through this draft (with --holder or --narrator).
    #[arg(long)]
    pub draft: Option<i64>,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    #[arg(long)]
    pub json: bool,
    /// Say why each hit ranked where it did: exact phrase, keyword rank and bm25, meaning rank
    /// and similarity, recency.
    #[arg(long)]
    pub explain: bool,
    pub query: String,
}

#[derive(Args)]
pub(crate) struct ListArgs {
    #[arg(long, default_value = DEFAULT_SCOPE)]
    pub scope: String,
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub(crate) struct EditArgs {
    pub id: i64,
    /// The new text (not with --versions or --restore).
    #[arg(required_unless_present_any = ["versions", "restore"])]
    pub text: Option<String>,
    /// List the memory's earlier versions.
    #[arg(long, conflicts_with_all = ["text", "restore"])]
    pub versions: bool,
    /// Make version V the text again.
    #[arg(long, value_name = "V", conflicts_with = "text")]
    pub restore: Option<i64>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// Notes without a scope of their own go to this one.
    #[arg(long, default_value = DEFAULT_SCOPE)]
    pub scope: String,
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("destination").required(true).multiple(false)))]
pub(crate) struct ExportArgs {
    /// Everything, losslessly, as one JSON file.
    #[arg(long, value_name = "FILE", group = "destination")]
    pub json: Option<PathBuf>,
    /// One Markdown file per memory, with front matter, in this folder.
    #[arg(long, value_name = "DIR", group = "destination")]
    pub markdown: Option<PathBuf>,
    /// Replace files that are already there (without it, an existing file is an error and
    /// nothing is written).
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Args)]
pub(crate) struct DeleteArgs {
    pub id: i64,
}

#[derive(Args)]
pub(crate) struct NotebookArgs {
    /// How many notes.
    #[arg(long, default_value_t = 100_000)]
    pub size: usize,
}

#[derive(Args)]
pub(crate) struct TranscribeArgs {
    /// No temperature fallback.
    #[arg(long)]
    pub no_fallback: bool,
    /// Beam width (1 = greedy).
    #[arg(long, default_value_t = speech::transcriber::DEFAULT_BEAM)]
    pub beam: u8,
    /// Print each segment on its own line with its start and end time (`[0:04 → 0:09] text`).
    #[arg(long)]
    pub segments: bool,
    /// Print the segments and times as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print how long it took, and how many times faster than real time that is.
    #[arg(long)]
    pub time: bool,
    /// The speech model file of the manifest (ggml-tiny.en.bin, ggml-base.bin).
    #[arg(long, default_value = umwelt::models::WHISPER_TINY_EN)]
    pub model: String,
    /// An audio file: WAV, MP3, FLAC, OGG/Opus, M4A/AAC, WebM, AIFF or CAF.
    pub file: PathBuf,
}

#[derive(Args)]
pub(crate) struct RecordArgs {
    #[arg(long)]
    pub device: Option<String>,
    #[arg(long)]
    pub seconds: Option<f32>,
    /// Where recordings go (default: `recordings/` beside the memory file).
    #[arg(long)]
    pub recordings: Option<PathBuf>,
    /// Once the dictation is kept as a memory, type it into the focused app as well.
    #[arg(long = "type")]
    pub type_it: bool,
}

#[derive(Args)]
pub(crate) struct TypeArgs {
    /// The text to type.
    pub text: String,
}

#[derive(Args)]
pub(crate) struct RecoverArgs {
    #[arg(long)]
    pub recordings: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct SpeakArgs {
    /// A voice id (see `umwelt-cli voices`).
    #[arg(long, default_value = voice::DEFAULT_VOICE)]
    pub voice: String,
    /// 0.5 (slow) to 2.0 (fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f32,
    /// Write a 24 kHz WAV file instead of playing.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only print, as JSON, the first phrase's Kokoro token ids and the voice file (what a
    /// peer needs to run the same model on the same input: scripts/bench-peers.sh).
    #[arg(long, conflicts_with_all = ["out", "device"])]
    pub tokens: bool,
    /// Play on this output device (see `umwelt-cli voices --devices`); default: the system's.
    #[arg(long)]
    pub device: Option<String>,
    pub text: String,
}

#[derive(Args)]
pub(crate) struct VoicesArgs {
    #[arg(long)]
    pub devices: bool,
}

#[derive(Args)]
pub(crate) struct WerArgs {
    /// formant (espeak-ng), neural (Kokoro) or both.
    #[arg(long, default_value = "both")]
    pub kind: String,
    /// Beam width (1 = greedy).
    #[arg(long, default_value_t = speech::transcriber::DEFAULT_BEAM)]
    pub beam: u8,
    /// No temperature fallback.
    #[arg(long)]
    pub no_fallback: bool,
    /// Whisper's full 30 s audio context instead of one sized to the clip.
    #[arg(long)]
    pub full_context: bool,
    /// Pass the set's vocabulary line as whisper's initial prompt.
    #[arg(long)]
    pub prompt: bool,
    /// No silence in front of each clip (whisper as it comes).
    #[arg(long)]
    pub no_lead_in: bool,
    /// Only the first N utterances.
    #[arg(long)]
    pub limit: Option<usize>,
    /// A GGML whisper model file (default: tiny.en).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Print each utterance heard wrongly.
    #[arg(long)]
    pub verbose: bool,
    /// Also write each clip as a 16 kHz WAV in this folder, with `umwelt.tsv` (kind, file,
    /// milliseconds, text, heard): the same clips for a peer (scripts/bench-peers.sh).
    #[arg(long)]
    pub clips_out: Option<PathBuf>,
    /// Only score a peer's transcripts: a TSV of kind, text, heard (no model is loaded).
    #[arg(long, conflicts_with = "clips_out")]
    pub score: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// The suite: `engine` (the app's, the default) or `town` (who holds what).
    #[arg(long, default_value = "engine")]
    pub suite: String,
    /// The town's days, for the town suite (the same as --sizes N).
    #[arg(long)]
    pub days: Option<usize>,
    /// Each town scenario on a fresh copy of the town, out of the OS's cache, with no warm-up
    /// (the seed's "request p99").
    #[arg(long)]
    pub cold: bool,
    /// Only the scenarios that need no model.
    #[arg(long)]
    pub fast: bool,
    /// Scenarios to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub scenario: Vec<String>,
    /// Corpus sizes for the retrieval and write scenarios, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Measured iterations per scenario (default 30; fewer for whole-store rewrites).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Keep the numbers: write the report as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print the results as Markdown tables (the format of docs/PERFORMANCE.md).
    #[arg(long)]
    pub markdown: bool,
    /// Compare with an earlier report (JSON) and print before and after side by side.
    #[arg(long)]
    pub compare: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum HolderCommand {
    Add { name: String },
}

#[derive(Subcommand)]
pub(crate) enum ClaimCommand {
    Add(ClaimAddArgs),
}

/// `NAME=POS`: a position on a named axis.
fn axis(s: &str) -> Result<(String, i64), String> {
    let (name, pos) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not NAME=POSITION"))?;
    let pos = pos
        .trim()
        .parse()
        .map_err(|_| format!("the position in '{s}' is not a whole number"))?;
    Ok((name.trim().to_string(), pos))
}

#[derive(Args)]
pub(crate) struct ClaimAddArgs {
    #[arg(long)]
    pub holder: String,
    /// An entity the claim is about (repeatable).
    #[arg(long)]
    pub about: Vec<String>,
    #[arg(long, default_value = "fact", value_parser = ["fact", "event", "opinion"])]
    pub kind: String,
    #[arg(long)]
    pub draft: Option<i64>,
    /// A position on a named axis, NAME=POS (repeatable).
    #[arg(long, value_parser = axis)]
    pub axis: Vec<(String, i64)>,
    pub text: String,
}

#[derive(Args)]
pub(crate) struct TellArgs {
    #[arg(long)]
    pub from: String,
    #[arg(long)]
    pub to: String,
    #[arg(long)]
    pub draft: Option<i64>,
    pub claim: i64,
}

#[derive(Args)]
pub(crate) struct WitnessArgs {
    #[arg(long)]
    pub claim: i64,
    /// Holders, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub holders: Vec<String>,
    #[arg(long)]
    pub draft: Option<i64>,
}

#[derive(Args)]
pub(crate) struct AdjustArgs {
    #[arg(long)]
    pub holder: String,
    #[arg(long)]
    pub claim: i64,
    #[arg(long)]
    pub strength: f64,
    #[arg(long)]
    pub draft: Option<i64>,
}

#[derive(Args)]
pub(crate) struct HoldsArgs {
    #[arg(long)]
    pub draft: Option<i64>,
    /// Read as of a position on an axis, NAME=POS.
    #[arg(long, value_parser = axis)]
    pub axis: Option<(String, i64)>,
    pub holder: String,
    pub claim: i64,
}

#[derive(Args)]
pub(crate) struct WhoHoldsArgs {
    #[arg(long)]
    pub draft: Option<i64>,
    #[arg(long, value_parser = axis)]
    pub axis: Option<(String, i64)>,
    #[arg(long)]
    pub json: bool,
    pub claim: i64,
}

#[derive(Args)]
pub(crate) struct HoldingsArgs {
    #[arg(long, conflicts_with = "about", required_unless_present = "about")]
    pub holder: Option<String>,
    /// An entity: every holding of a claim about it.
    #[arg(long)]
    pub about: Option<String>,
    #[arg(long)]
    pub draft: Option<i64>,
    #[arg(long, value_parser = axis)]
    pub axis: Option<(String, i64)>,
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// The `next` of the page before.
    #[arg(long)]
    pub cursor: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub(crate) enum DraftCommand {
    /// Open a draft (prints its id).
    Open {
        #[arg(long)]
        parent: Option<i64>,
    },
    /// Merge a draft into its parent (a draft, or main).
    Merge { draft: i64 },
    /// Discard a draft and what was written in it.
    Discard { draft: i64 },
}

#[derive(Args)]
pub(crate) struct TownArgs {
    /// Days (1 to 3 360; the full town is 3 360).
    #[arg(long)]
    pub days: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(Subcommand)]
pub(crate) enum ModelsCommand {
    /// Verify every model file the app loads against the manifest.
    Check,
    /// Convert a CTranslate2 whisper model to a GGML file for whisper.cpp.
    ConvertWhisper(ConvertWhisperArgs),
}

#[derive(Args)]
pub(crate) struct ConvertWhisperArgs {
    #[arg(long)]
    pub ct2: PathBuf,
    /// `mel_80.npy` from openai-whisper's `mel_filters.npz`.
    #[arg(long)]
    pub mel: PathBuf,
    /// `gpt2.tiktoken` (English-only models) from openai-whisper.
    #[arg(long)]
    pub vocab: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
}
