//! Where the user's data lives: `$UMWELT_DATA_DIR`, else the XDG data directory
//! (`~/.local/share/umwelt` on Linux).

use std::path::PathBuf;

/// The folder holding the memory file and the recordings.
pub fn data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("UMWELT_DATA_DIR") {
        return PathBuf::from(d);
    }
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("umwelt")
}

/// The memory file: one SQLite database.
pub fn default_db() -> PathBuf {
    data_dir().join("memories.sqlite")
}

/// Where dictations are written before they are transcribed.
pub fn recordings_dir() -> PathBuf {
    data_dir().join("recordings")
}

/// The user's settings (voice, speed, devices).
pub fn settings_file() -> PathBuf {
    data_dir().join("settings.json")
}
