//! Which files are the store's recordings. A memory's `audio_path` is written by Umwelt's own
//! dictations, but also read from imported notes and JSON exports, which anyone can write; so a
//! path is stored, played or removed with its memory only when it names a regular file directly
//! inside the recordings folder (`recordings/` beside the memory file unless the store is told
//! otherwise). A note that says `audio: /home/u/Documents/taxes.pdf` links nothing, and deleting
//! it deletes nothing but the note.
//!
//! An encrypted store seals its recordings ([`crate::sealed`]) with a random key it keeps
//! inside itself (the `meta` row `recordings_key`): the recordings are as private as the file,
//! and a new key for the file (keyring to passphrase) leaves them as they are. A plain store
//! seals nothing; one made plain again keeps the key only until its recordings are unsealed
//! ([`Store::settle_recordings`]).

use std::path::{Component, Path, PathBuf};

use rusqlite::OptionalExtension;

use super::Store;
use crate::error::{Error, Result};
use crate::sealed::Seal;

/// The `meta` row that keeps the recordings' key (inside an encrypted file only, but for the
/// moments after a file is made plain and before its recordings are).
const SEAL_ROW: &str = "recordings_key";
/// The `meta` row naming the recordings folder last found wholly sealed beside this encrypted
/// file: a start that finds it naming the store's folder skips the sweep (which opens every
/// recording to read its first bytes: a tenth of a second for a few thousand). Every recording
/// made beside an encrypted file is sealed as it is written; the row goes when the file is
/// made plain.
const SEALED_ROW: &str = "recordings_sealed";

/// The recordings folder for a memory file at `db`: `recordings/` beside it, made absolute.
pub(super) fn beside(db: &Path) -> PathBuf {
    let dir = db.parent().unwrap_or(Path::new(""));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    absolute(&dir.join("recordings"))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Whether `a` and `b` are the same folder: the same path, or the same folder once links resolve.
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Whether `path` names a file directly inside `dir` (no `..`, no hidden name), by its path.
pub(crate) fn inside(dir: &Path, path: &Path) -> bool {
    if path.as_os_str().is_empty()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return false;
    }
    let path = absolute(path);
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    !name.to_string_lossy().starts_with('.') && same_dir(parent, &absolute(dir))
}

impl Store {
    /// The folder whose files may be this store's recordings.
    pub fn recordings_dir(&self) -> &Path {
        &self.recordings
    }

    /// Use `dir` as the recordings folder (the CLI's `--recordings`), not `recordings/` beside
    /// the memory file.
    pub fn with_recordings_dir(mut self, dir: impl AsRef<Path>) -> Store {
        self.recordings = absolute(dir.as_ref());
        self
    }

    /// Whether `path` may be stored as a memory's recording: a file directly inside the
    /// recordings folder (it need not exist yet).
    pub fn is_recording_path(&self, path: &str) -> bool {
        inside(&self.recordings, Path::new(path))
    }

    /// `path` as a recording that may be opened or removed: inside the recordings folder and a
    /// regular file there (not a link, a folder, a FIFO or a device), or why not.
    pub fn recording_file(&self, path: &str) -> Result<PathBuf> {
        if !self.is_recording_path(path) {
            return Err(Error::InvalidInput(format!(
                "{path} is not in Umwelt's recordings folder ({}), so Umwelt will not open or \
                 remove it; open it yourself if it is yours",
                self.recordings.display()
            )));
        }
        let meta = std::fs::symlink_metadata(path)
            .map_err(Error::io(format!("reading the recording {path}")))?;
        if !meta.file_type().is_file() {
            return Err(Error::InvalidInput(format!(
                "{path} is not a plain file (a link, a folder or a device), so Umwelt will not \
                 open or remove it"
            )));
        }
        Ok(PathBuf::from(path))
    }

    /// The key this store's recordings are sealed with: `None` for a plain store. An encrypted
    /// one makes its key the first time it is asked (two processes asking at once get the same
    /// one). A store opened with the tests' key seals with the tests' seal ([`Seal::for_tests`]).
    pub fn seal(&self) -> Result<Option<Seal>> {
        if !self.is_encrypted() {
            return Ok(None);
        }
        if let Some(s) = self.seal.get() {
            return Ok(Some(s.clone()));
        }
        let seal = match Seal::for_tests().filter(|_| self.test_keyed) {
            Some(s) => s.clone(),
            None => {
                let fresh = Seal::random()?;
                let conn = self.conn();
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES (?1, ?2)",
                    rusqlite::params![SEAL_ROW, fresh.to_hex().as_str()],
                )?;
                self.kept_seal(&conn)?.ok_or_else(|| {
                    Error::InvalidInput(
                        "the recordings' key kept in the memory file is damaged; the recordings \
                         sealed with it cannot be read"
                            .into(),
                    )
                })?
            }
        };
        Ok(Some(self.seal.get_or_init(|| seal).clone()))
    }

    fn kept_seal(&self, conn: &rusqlite::Connection) -> Result<Option<Seal>> {
        let hex: Option<zeroize::Zeroizing<String>> = conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [SEAL_ROW], |r| {
                r.get::<_, String>(0).map(zeroize::Zeroizing::new)
            })
            .optional()?;
        Ok(hex.and_then(|h| Seal::from_hex(&h)))
    }

    /// Bring the recordings folder to this store: sealed if it is encrypted; plain if it is not
    /// (then the key a file made plain kept goes, once every recording is unsealed). Each file
    /// changes in one rename, so a kill at any point leaves every recording readable, and the
    /// next call goes on. Returns what could not be done now, for a warning.
    pub fn settle_recordings(&self) -> Result<Vec<String>> {
        let folder = self.recordings.to_string_lossy().into_owned();
        let (from, to) = if self.is_encrypted() {
            let settled: Option<String> = self
                .conn()
                .query_row("SELECT value FROM meta WHERE key = ?1", [SEALED_ROW], |r| {
                    r.get(0)
                })
                .optional()?;
            if settled.as_deref() == Some(folder.as_str()) {
                return Ok(Vec::new());
            }
            (self.seal()?, self.seal()?)
        } else {
            let kept = self.kept_seal(&self.conn())?;
            let Some(kept) = kept else {
                return Ok(Vec::new());
            };
            self.conn()
                .execute("DELETE FROM meta WHERE key = ?1", [SEALED_ROW])?;
            (Some(kept), None)
        };
        let done = crate::sealed::sweep(&self.recordings, from.as_ref(), to.as_ref());
        if done.changed > 0 {
            tracing::info!(
                "{} recordings {}",
                done.changed,
                if to.is_some() {
                    "encrypted"
                } else {
                    "made plain"
                }
            );
        }
        if done.problems.is_empty() {
            if self.is_encrypted() {
                self.conn().execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                    [SEALED_ROW, folder.as_str()],
                )?;
            } else {
                self.conn()
                    .execute("DELETE FROM meta WHERE key = ?1", [SEAL_ROW])?;
            }
        }
        Ok(done.problems)
    }

    /// Remove forgotten memories' recordings: only regular files inside the recordings folder
    /// go. Any other path is left as it is and logged (without the memory's text); one that
    /// cannot be removed is logged, and the next start's recovery offers it back as a draft
    /// rather than lose it silently.
    pub(super) fn remove_recordings(&self, paths: impl IntoIterator<Item = String>) {
        for path in paths {
            match self.recording_file(&path) {
                Ok(file) => match std::fs::remove_file(&file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        tracing::warn!("removing a forgotten memory's recording {path}: {e}")
                    }
                    _ => {}
                },
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!("a forgotten memory's recording is left alone: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_directly_in_the_folder_is_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("recordings");
        std::fs::create_dir(&rec).unwrap();
        assert!(inside(&rec, &rec.join("1700000000123.wav")));
        assert!(!inside(&rec, &dir.path().join("taxes.pdf")));
        assert!(!inside(&rec, &rec.join("..").join("taxes.pdf")));
        assert!(!inside(&rec, &rec.join("sub").join("a.wav")));
        assert!(!inside(&rec, Path::new(".bashrc")));
        assert!(!inside(&rec, Path::new("")));
        assert!(!inside(&rec, &rec.join(".hidden")));
        assert!(!inside(&rec, Path::new("/etc/passwd")));
        // A link to the folder is the folder; a link from inside it to elsewhere is not a file
        // of it (recording_file refuses links).
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&rec, &link).unwrap();
        assert!(inside(&rec, &link.join("a.wav")));
    }
}
