//! Where the user's data lives: `$UMWELT_DATA_DIR`, else the XDG data directory
//! (`~/.local/share/umwelt` on Linux).

use std::path::{Path, PathBuf};

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

/// Make `dir` (and any missing parents, which Umwelt then owns) a private folder: 0700.
/// An existing folder's mode is repaired too.
pub fn private_dir(dir: &Path) -> crate::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let failed = crate::Error::io(format!("creating the folder {}", dir.display()));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed)?;
    let meta = std::fs::metadata(dir).map_err(crate::Error::io(format!(
        "reading the folder {}",
        dir.display()
    )))?;
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(
            crate::Error::io(format!("making {} private", dir.display())),
        )?;
    }
    Ok(())
}

/// Make the data folder private at start, and repair what an older Umwelt (or a umask) left
/// readable by others: every folder in it 0700, every file and socket 0600, two levels deep
/// (the data folder, then `recordings/`, `logs/` and the like). Links are not followed and not
/// changed. Returns how many modes were repaired; what cannot be repaired is logged.
pub fn secure_data_dir(dir: &Path) -> crate::Result<usize> {
    private_dir(dir)?;
    Ok(repair_modes(dir, 2))
}

fn repair_modes(dir: &Path, depth: usize) -> usize {
    use std::os::unix::fs::PermissionsExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut repaired = 0;
    for e in entries.flatten() {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        let want = if kind.is_dir() {
            0o700
        } else if kind.is_symlink() {
            continue;
        } else {
            0o600
        };
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            match std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & want)) {
                Ok(()) => repaired += 1,
                Err(e) => tracing::warn!("making {} private: {e}", path.display()),
            }
        }
        if kind.is_dir() && depth > 1 {
            repaired += repair_modes(&path, depth - 1);
        }
    }
    repaired
}

/// Make the files and folders this process creates private from now on (umask 077): what
/// SQLite, the log and the recorder create is then 0600, folders 0700. The app and the CLI set
/// it first thing; the engine does not rely on it.
pub fn private_umask() {
    // SAFETY: umask only sets the process's file mode creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_data_folder_and_what_it_holds_become_private_and_links_are_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("umwelt");
        let rec = data.join("recordings");
        std::fs::create_dir_all(&rec).unwrap();
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(&data, open.clone()).unwrap();
        std::fs::set_permissions(&rec, open).unwrap();
        for f in [
            data.join("memories.sqlite"),
            data.join("memories.sqlite-wal"),
            rec.join("1.wav"),
        ] {
            std::fs::write(&f, b"x").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let theirs = root.path().join("theirs.txt");
        std::fs::write(&theirs, b"x").unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&theirs, data.join("link")).unwrap();

        assert_eq!(secure_data_dir(&data).unwrap(), 4);
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&rec), 0o700);
        assert_eq!(mode(&data.join("memories.sqlite")), 0o600);
        assert_eq!(mode(&data.join("memories.sqlite-wal")), 0o600);
        assert_eq!(mode(&rec.join("1.wav")), 0o600);
        assert_eq!(
            mode(&theirs),
            0o644,
            "a file outside, reached by a link, is not touched"
        );
        assert_eq!(
            secure_data_dir(&data).unwrap(),
            0,
            "a second start has nothing to repair"
        );
        let fresh = root.path().join("a").join("b");
        private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
    }
}
