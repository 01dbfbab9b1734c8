//! The app's log: what went wrong, and what was being done, in a file the user can open
//! (Settings → "Open the log folder") and send with a report. It rotates daily in
//! `<data folder>/logs/` and keeps a week; warnings also go to stderr.
//!
//! What is logged is what the app did and what failed: paths, sizes, errors. Never the text of a
//! memory, a draft or a search: logging calls in the engine and the shell pass errors and file
//! names, not user text (`tests/e2e/log.test.mjs` checks a session's log for the note it typed).

use std::path::{Path, PathBuf};

use tracing_subscriber::fmt::writer::MakeWriterExt;

/// How many daily log files are kept.
const KEEP_DAYS: usize = 7;

/// The log folder under the data folder.
pub fn log_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("logs")
}

/// Send the engine's and the shell's `tracing` events to the log file (info and above) and to
/// stderr (warnings and above). If the folder cannot be written, to stderr alone, and says so.
pub fn init(dir: &Path) {
    let stderr = std::io::stderr.with_max_level(tracing::Level::WARN);
    // The appender lists the folder (to prune old files) before it would create it.
    let file = umwelt::paths::private_dir(dir)
        .map_err(|e| e.to_string())
        .and_then(|_| {
            tracing_appender::rolling::Builder::new()
                .rotation(tracing_appender::rolling::Rotation::DAILY)
                .filename_prefix("umwelt")
                .filename_suffix("log")
                .max_log_files(KEEP_DAYS)
                .build(dir)
                .map_err(|e| e.to_string())
        });
    let builder = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_target(false);
    let installed = match file {
        Ok(file) => builder
            .with_writer(stderr.and(file.with_max_level(tracing::Level::INFO)))
            .try_init(),
        Err(e) => {
            let installed = builder.with_writer(stderr).try_init();
            tracing::warn!(
                "the log file in {} cannot be written ({e}); logging to stderr only",
                dir.display()
            );
            installed
        }
    };
    if installed.is_ok() {
        tracing::info!("Umwelt {} started", env!("CARGO_PKG_VERSION"));
    }
}
