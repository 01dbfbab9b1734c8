//! The managers: each owns one of the app's resources, under one lock, and holds the logic of
//! using it; the commands are thin calls into them.
//!
//! | file | owns |
//! |---|---|
//! | `microphone.rs` | the microphone: nobody, Settings' level check, or a dictation and its meter |
//! | `speaker.rs` | the speaker: the reply being read aloud |
//! | `models.rs` | the speech models: loading at start-up (with re-embedding and recovery), idle unload |
//! | `bench.rs` | the dashboard's benchmark: one run at a time, cancel, keep the run |
//! | `forgetting.rs` | deletions waiting out their Undo time; carried out at the latest on exit |
//! | `town.rs` | the demo town: its own file (never the user's memories), built with progress, its one connection |
//! | `desktop.rs` | what lies outside the window: whether it has the focus, the clipboard the app sets, notifications |
//! | `jobs.rs` | the one long job on the user's files (transcribing a file, importing notes) and its Cancel |

pub mod bench;
pub mod desktop;
pub mod forgetting;
pub mod jobs;
pub mod microphone;
pub mod models;
pub mod speaker;
pub mod town;
