//! Encrypting a plain memory file in place, and making an encrypted one plain again, so that a
//! kill at any moment loses nothing and leaves a file that opens.
//!
//! The steps, the same both ways:
//! 1. **Alone.** The file leaves WAL mode, which SQLite refuses while any other connection has
//!    it open (another window, a command, an agent's server): the conversion then stops and
//!    says so. From here it holds the file's exclusive lock.
//! 2. **Copy.** `sqlcipher_export` copies every table, index, trigger and full-text index into
//!    `<file>.converting` (keyed, or plain), which is synced, opened again and checked: its
//!    integrity and the row count of every table against the original.
//! 3. **Mark.** The original's `user_version` becomes `-1 - version`. A process that was
//!    waiting on the lock to open the original wakes to a file no Umwelt opens as it is: it
//!    sees the path now names another file, and opens that (see [`finish_interrupted`]),
//!    instead of writing into a file that is about to be replaced.
//! 4. **Swap.** The copy is renamed over the original (atomic) and the folder synced.
//!
//! A kill before the swap leaves the original in place, perhaps marked, and perhaps a copy
//! beside it: the next open unmarks the original and removes the copy. A kill after it leaves
//! the converted file in place. Crash points (`crate::crashpoint`): [`POINTS`].

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::cipher::{FileState, Key, KeySpec};
use crate::crashpoint;
use crate::error::{Error, Result};

/// The crash points of a conversion, in the order it reaches them.
pub const POINTS: &[&str] = &[
    "convert.alone",
    "convert.copied",
    "convert.marked",
    "convert.swapped",
];

/// Which way a conversion goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Encrypt,
    Decrypt,
}

/// Encrypt the plain memory file at `path` with `key`, in place.
pub fn encrypt(path: &Path, key: &Key) -> Result<()> {
    convert(path, None, Some(key))
}

/// Make the encrypted memory file at `path` (opened with `key`) plain again, in place.
pub fn decrypt(path: &Path, key: &Key) -> Result<()> {
    convert(path, Some(key), None)
}

/// Encrypt the memory file at `path` (opened with `from`) with another key `to`, in place:
/// the file is never plain on the disk in between.
pub fn rekey(path: &Path, from: &Key, to: &Key) -> Result<()> {
    convert(path, Some(from), Some(to))
}

/// Where the copy is made: beside the file, on the same disk (a rename must be atomic).
pub fn copy_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".converting");
    PathBuf::from(s)
}

fn convert(path: &Path, from: Option<&Key>, to: Option<&Key>) -> Result<()> {
    super::register_sqlite_vec();
    match (FileState::of(path)?, from) {
        (FileState::New, _) => {
            return Err(Error::NotFound(format!(
                "the memory file {}",
                path.display()
            )))
        }
        (FileState::Encrypted, None) => {
            return Err(Error::InvalidInput(format!(
                "the memory file {} is already encrypted",
                path.display()
            )))
        }
        (FileState::Plain, Some(_)) => return Err(Error::NotEncrypted(path.into())),
        (FileState::NotADatabase, _) => {
            return Err(Error::InvalidInput(format!(
                "{} is not a memory file (it is damaged, or something else); nothing was changed",
                path.display()
            )))
        }
        _ => {}
    }
    // The original as it is: plain, or opened with its key. A conversion cut short before is
    // finished (unmarked, its copy removed) first.
    let (conn, _) = super::open_connection(path, from)?;
    if !finish_interrupted(&conn, path)? {
        return Err(Error::InvalidInput(format!(
            "the memory file {} was replaced while it was being opened; try again",
            path.display()
        )));
    }
    let copy = copy_path(path);

    // 1. Alone: out of WAL mode (refused while another connection has the file open), then
    // a write in exclusive locking mode takes the lock that is held until the end.
    let in_use = || {
        Error::InvalidInput(format!(
            "the memory file {} is open in another program (another Umwelt window, a command, or an agent's server). Close it, then try again; nothing was changed.",
            path.display()
        ))
    };
    let busy_means_in_use = |e: rusqlite::Error| -> Error {
        if super::BusyError::is_busy(&e) {
            in_use()
        } else {
            e.into()
        }
    };
    let mode = conn
        .query_row("PRAGMA journal_mode = DELETE", [], |r| {
            r.get::<_, String>(0)
        })
        .map_err(busy_means_in_use)?;
    // SQLite stays in WAL mode, without an error, while another connection has the file.
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(in_use());
    }
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    conn.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
    conn.pragma_update(None, "user_version", version)
        .map_err(busy_means_in_use)?;
    crashpoint::reached("convert.alone");

    // 2. Copy.
    let _ = std::fs::remove_file(&copy);
    let target = to.map(|k| KeySpec::for_file(k, &copy)).transpose()?;
    if let Err(e) = copy_and_check(&conn, path, &copy, target.as_ref(), version) {
        let _ = std::fs::remove_file(&copy);
        return Err(e);
    }
    crashpoint::reached("convert.copied");

    // 3. Mark.
    conn.pragma_update(None, "user_version", -1 - version)?;
    crashpoint::reached("convert.marked");

    // 4. Swap.
    if let Err(e) = std::fs::rename(&copy, path).map_err(Error::io(format!(
        "putting the converted copy in place of {}",
        path.display()
    ))) {
        let _ = conn.pragma_update(None, "user_version", version);
        let _ = std::fs::remove_file(&copy);
        return Err(e);
    }
    sync_dir(path)?;
    crashpoint::reached("convert.swapped");
    drop(conn);
    // The converted file opens (the copy's key spec opens it: it took that salt) and goes
    // back to WAL mode, as Store::open would set it.
    let conn = super::connect(path)?;
    if let Some(t) = &target {
        t.apply(&conn, path)?;
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    Ok(())
}

/// Step 2: the copy (encrypted with `target`, or plain), synced and checked.
fn copy_and_check(
    conn: &Connection,
    path: &Path,
    copy: &Path,
    target: Option<&KeySpec>,
    version: i64,
) -> Result<()> {
    super::create_private(copy)?;
    let copy_str = copy
        .to_str()
        .ok_or_else(|| Error::InvalidInput(format!("{} is not a UTF-8 path", copy.display())))?;
    match target {
        Some(spec) => spec.attach(conn, copy_str, "converting")?,
        None => {
            conn.execute("ATTACH DATABASE ?1 AS converting KEY ''", [copy_str])?;
        }
    }
    conn.query_row("SELECT sqlcipher_export('converting')", [], |_| Ok(()))?;
    conn.pragma_update(Some("converting"), "user_version", version)?;
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND rootpage > 0 \
             AND name != 'sqlite_sequence'",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for t in &tables {
        let count = |db: &str| -> rusqlite::Result<i64> {
            let q = format!("SELECT count(*) FROM {db}.\"{}\"", t.replace('"', "\"\""));
            conn.query_row(&q, [], |r| r.get(0))
        };
        let (a, b) = (count("main")?, count("converting")?);
        if a != b {
            return Err(Error::InvalidInput(format!(
                "the converted copy of {} lost rows of {t} ({a} → {b}); the original is unchanged",
                path.display()
            )));
        }
    }
    conn.execute_batch("DETACH DATABASE converting")?;
    std::fs::File::open(copy)
        .and_then(|f| f.sync_all())
        .map_err(Error::io(format!("syncing {}", copy.display())))?;
    // Opened again on its own, as the next start will open it.
    let check = Connection::open(copy)?;
    if let Some(spec) = target {
        spec.apply(&check, copy)?;
    }
    let ok: String = check.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
    let copied: i64 = check.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if ok != "ok" || copied != version {
        return Err(Error::InvalidInput(format!(
            "the converted copy of {} did not check out ({ok}); the original is unchanged",
            path.display()
        )));
    }
    Ok(())
}

/// A conversion killed before its swap left the original marked, or a copy beside it, or both:
/// unmark the original and remove the copy. Called on every open, on the connection that just
/// opened `path`, once it could read the file (so no conversion holds its lock now).
/// `Ok(false)` when `path` no longer names the file this connection has open (a conversion
/// swapped it while this process waited for the lock): open again.
pub(crate) fn finish_interrupted(conn: &Connection, path: &Path) -> Result<bool> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version < 0 && !holds_open(path)? {
        return Ok(false);
    }
    let copy = copy_path(path);
    if copy.exists() {
        std::fs::remove_file(&copy).map_err(Error::io(format!("removing {}", copy.display())))?;
        tracing::warn!("removed {}, left by a conversion cut short", copy.display());
    }
    if version < 0 {
        conn.pragma_update(None, "user_version", -1 - version)?;
        tracing::warn!(
            "{}: a conversion was cut short; the file is as it was before it",
            path.display()
        );
    }
    Ok(true)
}

/// Whether this process has open the file `path` names now. (SQLite does not hand out its
/// descriptor; the inodes behind /proc/self/fd are compared, by stat alone: opening and
/// closing the database file here would drop SQLite's locks on it.)
fn holds_open(path: &Path) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let now = match std::fs::metadata(path) {
        Ok(m) => (m.dev(), m.ino()),
        Err(_) => return Ok(false),
    };
    let fds = std::fs::read_dir("/proc/self/fd").map_err(Error::io("reading /proc/self/fd"))?;
    Ok(fds
        .flatten()
        .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| (m.dev(), m.ino()) == now)))
}

fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(Error::io(format!("syncing {}", dir.display())))
}
