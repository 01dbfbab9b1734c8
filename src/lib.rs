//! # Umwelt engine
//!
//! A private, offline memory: notes are stored in one SQLite file with their vectors
//! (sqlite-vec) and full text (FTS5), embedded with MiniLM on ONNX Runtime, dictated through
//! whisper.cpp, and recalled by meaning blended with recency. No GUI code lives here; the
//! desktop shell (`src-tauri/`) and the CLI (`src/bin/umwelt-cli/`) are thin fronts over it.
//!
//! | module | what it holds |
//! |---|---|
//! | [`store`] | the SQLite file: schema, remember, recall and ranking, list, delete, forget, history, re-embed (one file each) |
//! | [`embed`] | the embedding model (lazy) |
//! | [`speech`] | microphone, whisper, dictation |
//! | [`voice`] | reading aloud: espeak-ng phonemes, Kokoro on ONNX Runtime, streamed playback |
//! | [`audio`] | WAV files and resampling |
//! | [`sealed`] | recordings, spools and drafts encrypted at rest beside an encrypted memory file (XChaCha20-Poly1305 in chunks) |
//! | [`models`] | model manifest, resolver, ONNX Runtime sessions, the whisper file check, whisper CTranslate2→GGML converter |
//! | [`optimisations`] | the `UMWELT_PERF=off` switch and the thread counts it tunes |
//! | [`bench`] | the benchmark harness (scenarios, targets, p50/p95/p99) |
//! | [`exchange`] | export (lossless JSON, Markdown folders) and import (`.md`/`.txt` folders, JSON exports), all or nothing |
//! | [`settings`] | the user's choices (voice, speed, speaker, microphone), one JSON file |
//! | [`paths`] | where user data lives |
//! | [`clock`] | the time the engine stores (Unix milliseconds) |
//! | [`damaged`] | a database that cannot be opened is set aside, never deleted |
//! | [`crashpoint`] | named points where the crash sweep kills the process |

pub mod at_rest;
pub mod audio;
pub mod bench;
pub mod clipboard;
pub mod clock;
pub mod cpu;
pub mod crashpoint;
pub mod damaged;
pub mod embed;
pub mod error;
pub mod exchange;
pub mod kernels;
pub mod keyring;
pub mod lazy;
pub mod mcp;
pub mod models;
pub mod optimisations;
pub mod paths;
pub mod perf_db;
pub mod sealed;
pub mod settings;
pub mod speech;
pub mod store;
pub mod typing;
pub mod voice;

pub use error::{Error, Result};
pub use store::{Hit, Memory, MemoryId, Store};
