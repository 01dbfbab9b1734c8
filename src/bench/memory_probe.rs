//! Resident memory measured in a fresh process: the harness's `rss_*` scenarios.
//!
//! One process cannot say what the app holds after its warm-up: the scenarios run before have
//! loaded models and grown the allocator's pools, which stay. So a memory scenario starts the
//! binary it runs in again (`umwelt-cli`, or the app from its dashboard) with
//! [`PROBE_ENV`] set; [`run_if_asked`], called first thing by both, sees it, does what the app
//! does after start (every model the warm-up loads, each run once, and a memory file's index
//! loaded and searched), then the work asked for, prints the number on stdout and exits, before
//! any window or command line is set up.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// The environment variable that makes a process a probe: `warm`, `dictating`, `speaking` or
/// `spoke`.
pub const PROBE_ENV: &str = "UMWELT_MEMORY_PROBE";
/// The memory file a probe loads the index of (a harness corpus).
const PROBE_DB_ENV: &str = "UMWELT_MEMORY_PROBE_DB";
/// What starts the line a probe prints its number on.
const PREFIX: &str = "umwelt-memory-probe MiB ";

/// What a probe measures after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The resident set once warm (`VmRSS`).
    Warm,
    /// The highest resident set while dictating a five-second sentence at the pace of speech.
    Dictating,
    /// The highest resident set while reading a four-sentence reply aloud, paced.
    Speaking,
    /// The resident set once that reply has been read (what the voice keeps afterwards).
    Spoke,
}

impl Probe {
    fn name(self) -> &'static str {
        match self {
            Probe::Warm => "warm",
            Probe::Dictating => "dictating",
            Probe::Speaking => "speaking",
            Probe::Spoke => "spoke",
        }
    }
}

/// Start this binary again as probe `what` on the memory file `db`; its number (MiB).
pub fn measure(what: Probe, db: &Path) -> Result<f64> {
    let exe = std::env::current_exe().map_err(Error::io("finding this program's file"))?;
    let out = Command::new(&exe)
        .env(PROBE_ENV, what.name())
        .env(PROBE_DB_ENV, db)
        .output()
        .map_err(Error::io(format!(
            "starting {} as a memory probe",
            exe.display()
        )))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(PREFIX))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "the memory probe '{}' gave no number ({}): {}",
                what.name(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        })
}

/// If this process was started as a probe, run it and exit; otherwise return at once. Every
/// binary that runs the harness calls this before anything else.
pub fn run_if_asked() {
    // The MCP round trip's server (`scenarios/agents.rs`) is started the same way.
    crate::mcp::serve_if_asked();
    let Some(what) = std::env::var_os(PROBE_ENV) else {
        return;
    };
    let what = match what.to_str() {
        Some("warm") => Probe::Warm,
        Some("dictating") => Probe::Dictating,
        Some("speaking") => Probe::Speaking,
        Some("spoke") => Probe::Spoke,
        _ => {
            eprintln!("{PROBE_ENV} is warm, dictating, speaking or spoke, not {what:?}");
            std::process::exit(2);
        }
    };
    let db = std::env::var_os(PROBE_DB_ENV).map(PathBuf::from);
    match probe(what, db.as_deref()) {
        Ok(mib) => {
            println!("{PREFIX}{mib:.1}");
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

/// A field of `/proc/self/status` in MiB (`VmRSS`, `VmHWM`).
fn status_mib(field: &str) -> Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(Error::io("reading /proc/self/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .ok_or_else(|| Error::InvalidInput(format!("no {field} in /proc/self/status")))
}

/// Make `VmHWM` (the highest resident set) start again from the present one.
fn reset_peak() -> Result<()> {
    std::fs::write("/proc/self/clear_refs", "5").map_err(Error::io(
        "resetting the peak resident set (/proc/self/clear_refs)",
    ))
}

fn probe(what: Probe, db: Option<&Path>) -> Result<f64> {
    use crate::bench::{corpus::SCOPE, dictation};
    use crate::voice::{Output, SpeakOptions, Speaker, DEFAULT_VOICE};

    // What the app's warm-up leaves loaded (src-tauri/src/managers/models.rs): the memories'
    // index, the embedder (run once), whisper and the VAD (a shortcut is set by default), and
    // the voice (warmed by one phrase).
    let store = match db {
        Some(db) => {
            let store = crate::store::Store::open(db)?;
            store.preload(SCOPE)?;
            Some(store)
        }
        None => None,
    };
    let embedder = crate::embed::Embedder::load()?;
    let q = embedder.embed(&["what did the dentist say about Thursday?"])?;
    if let Some(store) = &store {
        store.recall_vector(&q[0], SCOPE, None, 10, crate::clock::now_ms())?;
    }
    let ears = crate::speech::Ears::load()?;
    let speaker = Speaker::new();
    speaker.warm_up(DEFAULT_VOICE)?;
    // As the app's warm-up ends.
    crate::optimisations::release_freed_memory();
    match what {
        Probe::Warm => status_mib("VmRSS"),
        Probe::Dictating => {
            let pcm = dictation::neural_by(&speaker, dictation::FIVE_SECONDS)?;
            reset_peak()?;
            dictation::live_dictation(&ears, &pcm, 0.5, 0.5)?;
            status_mib("VmHWM")
        }
        Probe::Speaking | Probe::Spoke => {
            reset_peak()?;
            speaker
                .speak(
                    dictation::SPEAK_REPLY,
                    &SpeakOptions::default(),
                    Output::Paced,
                )?
                .wait()?;
            status_mib(if what == Probe::Spoke {
                "VmRSS"
            } else {
                "VmHWM"
            })
        }
    }
}
