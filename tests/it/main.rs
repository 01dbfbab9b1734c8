//! The engine's integration tests, in one binary: whisper.cpp and ONNX Runtime are linked once,
//! not once per file. One module per area; run one with `cargo test --test it <module>::`.
//!
//! The tests share one process, so each begins by saying how (`tests/common/mod.rs`):
//! `common::shared()` (changes nothing process-wide), `common::exclusive()` (flips the
//! optimisations switch) or `common::own_process!()` (points ALSA or the model resolver
//! somewhere through the environment, or times itself against the clock: it runs in a child
//! process of this binary, alone).
//!
//! | module | tests |
//! |---|---|
//! | `store` | remember and recall with the real embedder, reopening, recency, bad input |
//! | `disk_full` | the disk fills while dictating: said within a second, memory bounded, a draft of what was kept; a large index whose side file cannot grow takes its vectors back into memory and recall answers |
//! | `embed` | Umwelt's own MiniLM against ONNX Runtime on the same file: the same vectors, the same bits in any batch, meaning found |
//! | `engine` | the store on random vectors: both recall paths, forget, re-embed, history, migration |
//! | `speech` | whisper on spoken sentences; a dictation from spool to draft to memory |
//! | `exchange` | edit with versions, JSON and Markdown export round trips, folder import with skips, all or nothing |
//! | `fuzz` | hostile input for every parser: settings, dashboard import, spool, WAV, phonemizer, search |
//! | `microphone` | a sentence through an ALSA file microphone, heard by whisper |
//! | `microphone_paced` | Settings' level check, and a microphone that goes quiet, in real time |
//! | `dictation_first_word` | speech starting at the first sample keeps its first word |
//! | `dictation_long` | three minutes of dictation with pauses |
//! | `crash_sweep` | SIGKILL at every step from record to memory: one draft or one memory after, never lost |
//! | `recovery` | a killed dictation recovered at the next start; a cut spool |
//! | `voice` | what the voice says is what whisper hears; stop; bad input |
//! | `retrieval_set` | the committed retrieval set at scale: sizes, every question's target, the distractors as their generator writes them; built into a real file with the real model and scored |
//! | `search` | hybrid search: exact phrase first among a thousand, codes by their words, FTS5 syntax as text, holders isolated, near-copies collapsed |
//! | `speaker` | streamed playback, paced and through ALSA, without gaps |
//! | `bad_models` | a missing or damaged model is reported clearly |
//! | `cli` | `umwelt-cli` round trips, refusals, the fast bench, and the memory scenarios' fresh probe processes |
//! | `browse` | the memory browser's reads: pages (none twice or missed), filters and counts, sessions, forgetting one session, search within a filter |
//! | `transcribe_file` | an audio file of every format to text with times; a long file in stretches; Cancel; cut short; not audio; the draft it becomes |
//! | `holdings` | who holds what: tellings and chains, drafts to any depth, axes, pages and cursors, isolation on every path, bad input; property tests of drafts, merges and isolation; a small town |
//! | `unsaved` | an unsaved dictation is a draft of the user's holder: seen in it only, saved once, discarded, put right after a crash |
//! | `mcp` | `umwelt-cli mcp` driven by rmcp's client as a child process: every tool, resources, a second writer on the file, read-only and Settings → Agents, bad requests answered with JSON-RPC errors, a client leaving mid-call |
//! | `typing` | dictation into another app: `umwelt-cli type` and `record --type` into xterm under Xvfb (accents, an emoji), the dictation kept when there is no window to type into |
//! | `encryption` | the memory file encrypted (SQLCipher): unreadable to `sqlite3` and `strings` without its key, the log too; no key, a wrong key, a key for a plain file refused with nothing changed; encrypted in place and back; a kill at every step of the conversion; refused while the file is open elsewhere; an encrypted file never set aside as damaged |
//! | `keyring` | the key in the real keyring (gnome-keyring-daemon on the test's own session bus, unlocked as a login does): kept, read back across a restart, one entry per file, never in the clear in the keyring's file, forgotten; no keyring on the bus, or no bus: said in time |
//! | `at_rest` | Settings → Privacy at every open, against the real keyring: a plain file encrypted in place with a key made and kept the first time; moved to a passphrase and back to the keyring; made plain again, its entry removed; a wrong passphrase asked again with nothing changed; no keyring: a new file plain with a warning, an encrypted one asked for its passphrase, never replaced |
//! | `writers` | two processes on one file: writes wait their turn, recall sees the others' writes |

#[path = "../common/mod.rs"]
mod common;

mod at_rest;
mod bad_models;
mod browse;
mod cli;
mod crash_sweep;
mod dictation_first_word;
mod dictation_long;
mod disk_full;
mod embed;
mod encryption;
mod engine;
mod exchange;
mod fuzz;
mod holdings;
mod keyring;
mod mcp;
mod microphone;
mod microphone_paced;
mod recovery;
mod retrieval_set;
mod search;
mod speaker;
mod speech;
mod store;
mod transcribe_file;
mod typing;
mod unsaved;
mod voice;
mod writers;
