//! A database Umwelt cannot open at start (not a database, or corrupt) is set aside, never
//! deleted: it is renamed `<name>.damaged-<ms>` (with its `-wal` and `-shm` beside it), a fresh
//! one is made, and the caller tells the user where the old one is kept. An encrypted memory
//! file is never taken for a damaged one (`store::cipher::FileState`): opening it without its
//! key is refused with nothing changed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Whether `e` says the file is not a database, or a corrupt one (and not, say, locked or
/// unreadable, which setting it aside would not cure).
pub fn is_damaged_db(e: &Error) -> bool {
    matches!(
        e,
        Error::Db(rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            )
    )
}

/// Rename `path` (and its `-wal`, `-shm` and `-journal` files) to `<name>.damaged-<ms>`;
/// returns the new path of the main file.
pub fn set_aside(path: &Path) -> Result<PathBuf> {
    let stamp = crate::clock::now_ms();
    let aside = |p: &Path| {
        let mut name = p.as_os_str().to_owned();
        name.push(format!(".damaged-{stamp}"));
        PathBuf::from(name)
    };
    let main = aside(path);
    std::fs::rename(path, &main).map_err(Error::io(format!(
        "setting the damaged {} aside",
        path.display()
    )))?;
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let side = PathBuf::from(side);
        if side.exists() {
            std::fs::rename(&side, aside(&side)).map_err(Error::io(format!(
                "setting the damaged {} aside",
                side.display()
            )))?;
        }
    }
    Ok(main)
}

/// Open the database at `path` with `open`; if it is damaged, set it aside and open a fresh
/// one. Returns what was opened and, if the old file was set aside, where it is now.
pub fn open_or_set_aside<T>(
    path: &Path,
    open: impl Fn(&Path) -> Result<T>,
) -> Result<(T, Option<PathBuf>)> {
    // A file that does not even start as SQLite is set aside before SQLite opens it, so that
    // nothing beside it (a `-wal` file that may hold the last writes) is touched.
    if !starts_as_sqlite(path) {
        tracing::warn!(
            "{} is not an SQLite database; setting it aside",
            path.display()
        );
        let kept = set_aside(path)?;
        return Ok((open(path)?, Some(kept)));
    }
    match open(path) {
        Ok(t) => Ok((t, None)),
        Err(e) if is_damaged_db(&e) => {
            tracing::warn!(
                "{} cannot be opened ({e}); setting it aside",
                path.display()
            );
            let kept = set_aside(path)?;
            Ok((open(path)?, Some(kept)))
        }
        Err(e) => Err(e),
    }
}

/// Absent, empty (SQLite writes its header at the first write), starting with SQLite's magic,
/// or an encrypted file: anything but what cannot be a database. An encrypted file is never set
/// aside: without its key it cannot be told from a damaged one, and opening it says so.
fn starts_as_sqlite(path: &Path) -> bool {
    !matches!(
        crate::store::cipher::FileState::of(path),
        Ok(crate::store::cipher::FileState::NotADatabase)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_database_is_set_aside_whole_and_a_fresh_one_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf.sqlite");
        std::fs::write(
            &path,
            b"this was never a database, but it is the user's file",
        )
        .unwrap();
        std::fs::write(dir.path().join("perf.sqlite-wal"), b"wal bytes").unwrap();
        let (runs, kept) = open_or_set_aside(&path, crate::perf_db::Runs::open).unwrap();
        let kept = kept.expect("set aside");
        assert_eq!(
            std::fs::read(&kept).unwrap(),
            b"this was never a database, but it is the user's file"
        );
        assert!(std::fs::read_dir(dir.path()).unwrap().flatten().any(|e| e
            .file_name()
            .to_string_lossy()
            .starts_with("perf.sqlite-wal.damaged-")));
        assert!(runs.list().unwrap().is_empty());
        // A healthy file is opened as it is.
        drop(runs);
        let (_, kept) = open_or_set_aside(&path, crate::perf_db::Runs::open).unwrap();
        assert!(kept.is_none());
        // Something else (a folder where the file should be) is an error, and nothing moves.
        let folder = dir.path().join("folder.sqlite");
        std::fs::create_dir(&folder).unwrap();
        assert!(open_or_set_aside(&folder, crate::perf_db::Runs::open).is_err());
        assert!(folder.is_dir());
    }
}
