//! The memory store: one SQLite file (WAL) holding claims, their full text (FTS5) and their
//! vectors, found again by meaning blended with recency.
//!
//! Opening a store is cheap and never loads a model; the embedder loads on the first
//! [`Store::remember`] or [`Store::recall`].
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Store`]: opening the file, the connection, `write_tx` (every write transaction), the holder of a scope |
//! | `memory.rs` | what a memory is ([`Memory`], [`NewMemory`], [`Hit`]), the one query that reads a memory back; `list`, `get`, `count` |
//! | `write.rs` | remembering: `remember`, `remember_batch` (one transaction) |
//! | `recall.rs` | recall and its ranking (similarity + recency), `preload`, [`RecallStats`]; loaded indexes kept in step with other processes (`PRAGMA data_version`) |
//! | `search.rs` | hybrid search: words (FTS5 bm25) and meaning (recall) fused by reciprocal rank, exact phrases first, each hit with its why |
//! | `index.rs` | the memory-resident 4-bit + f32 vector index of one holder |
//! | `full_vectors.rs` | where an index keeps its f32 vectors: the heap while small, a side file (`pread`) once large |
//! | `edit.rs` | editing a memory, its earlier versions kept and restorable |
//! | `forget.rs` | `delete` one memory, `forget` a whole scope |
//! | `recordings.rs` | which paths are the store's recordings: only regular files inside its recordings folder are stored, played or removed |
//! | `history.rs` | a session's history and turn log, through the journal |
//! | `journal.rs` | the debounced writer of history and the turn log |
//! | `reembed.rs` | re-embedding what an older model made, resumable |
//! | `holdings/` | who holds what (the second seed): holders, claims about entities, tellings, witnessing, strengths, drafts, axes, claim search by holder or narrator |
//! | `schema.rs` | the tables and their migrations (`PRAGMA user_version`) |
//! | `cipher.rs` | encryption at rest (SQLCipher): the [`cipher::Key`], whether a file is plain or encrypted, keying a connection |
//! | `conversion.rs` | encrypting a plain file in place, and back, safe against a kill at any step |
//!
//! # Ranking
//! [`Store::recall`] takes the `max(4k, 50)` nearest claims by cosine similarity (through the
//! memory-resident index of `index.rs`, or an exact scan in SQL with sqlite-vec's
//! `vec_distance_cosine` when `UMWELT_PERF=off`), then orders them by
//!
//! ```text
//! score = cosine_similarity + RECENCY_WEIGHT * 0.5 ^ (age_days / RECENCY_HALF_LIFE_DAYS)
//! ```
//!
//! so that between two equally close memories the newer wins, while meaning still dominates
//! (the recency term is worth at most 0.1).

mod browse;
pub mod cipher;
pub mod conversion;
mod diversity;
mod edit;
mod forget;
mod full_vectors;
mod fusion;
mod history;
pub mod holdings;
mod index;
pub mod journal;
mod memory;
mod recall;
mod recordings;
mod reembed;
mod schema;
mod search;
mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, Once};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::embed::LazyEmbedder;
use crate::error::{Error, Result};
use cipher::{FileState, Key, KeySpec};
use index::VecIndex;
use journal::Journal;

pub use browse::{Cursor, Filter, Page, SessionSummary, MAX_PAGE};
pub use edit::Version;
pub use full_vectors::SPILL_FROM;
pub use fusion::RRF_K;
pub use memory::{Hit, Memory, MemoryId, NewMemory, DEFAULT_SCOPE, MAX_TEXT_BYTES};
pub use recall::{RecallStats, MAX_K, RECENCY_HALF_LIFE_DAYS, RECENCY_WEIGHT};
pub use reembed::ReembedProgress;
pub use schema::CURRENT_VERSION as SCHEMA_VERSION;
pub use search::{fts_phrase, fts_words, SearchHit, Why, COMMON_DOCS, MAX_QUERY_WORDS};

/// The store. Share it as `Arc<Store>`; calls are serialised on one connection.
pub struct Store {
    conn: Mutex<Connection>,
    /// How this file's connections are keyed, when it is encrypted (`cipher.rs`).
    key: Option<KeySpec>,
    embedder: Arc<LazyEmbedder>,
    path: PathBuf,
    /// The only folder whose files may be memories' recordings (`recordings.rs`).
    recordings: PathBuf,
    /// The key its recordings are sealed with, once asked for (`recordings.rs`).
    seal: std::sync::OnceLock<crate::sealed::Seal>,
    /// Opened with the tests' key ([`cipher::test_key`]): its recordings take the tests' seal.
    test_keyed: bool,
    /// Per holder id: its vectors in memory, loaded on that holder's first recall.
    indexes: Mutex<HashMap<i64, VecIndex>>,
    /// Every claim's vector, for who-holds-what search; loaded on the first such search.
    claims: Mutex<Option<VecIndex>>,
    /// Per holder, the codes of what it holds on main, side by side (see `holdings/vectors.rs`).
    held_codes: Mutex<HashMap<i64, holdings::HeldCodes>>,
    journal: Mutex<Option<Arc<Journal>>>,
    indexed: AtomicU64,
    scanned: AtomicU64,
}

/// Create the memory file as an empty private file (0600) if it does not exist yet: SQLite
/// then gives its `-wal` and `-shm` the same mode. An existing file is left as it is (the app
/// repairs its own data folder's modes at start: [`crate::paths::secure_data_dir`]).
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io(format!(
            "creating the memory file {}",
            path.display()
        ))(e)),
        _ => Ok(()),
    }
}

/// A connection to the memory file at `path`, keyed with `key` when it is encrypted (and the
/// key spec, for the store's other connections); see [`Store::open_keyed`].
fn open_connection(path: &Path, key: Option<&Key>) -> Result<(Connection, Option<KeySpec>)> {
    let state = FileState::of(path)?;
    let spec = match (key, state) {
        // SQLite's own "file is not a database" says it (and the app sets such a file aside).
        (_, FileState::NotADatabase) => None,
        (None, FileState::Encrypted) => return Err(Error::Locked(path.to_path_buf())),
        (Some(_), FileState::Plain) => return Err(Error::NotEncrypted(path.to_path_buf())),
        (Some(k), _) => Some(KeySpec::for_file(k, path)?),
        (None, _) => None,
    };
    create_private(path)?;
    let conn = connect(path)?;
    let Some(spec) = spec else {
        return Ok((conn, None));
    };
    match spec.apply(&conn, path) {
        Ok(()) => Ok((conn, Some(spec))),
        // Another process made the new file first, with its own salt: derive again from it.
        Err(Error::WrongKey(_)) if state == FileState::New => {
            drop(conn);
            let spec = KeySpec::for_file(key.expect("keyed"), path)?;
            let conn = connect(path)?;
            spec.apply(&conn, path)?;
            Ok((conn, Some(spec)))
        }
        Err(e) => Err(e),
    }
}

/// A connection that waits for another's lock: first, before any statement, so that the key
/// check, switching to WAL, the migrations and every later statement wait for another
/// process's lock rather than fail at once.
fn connect(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // SQLCipher's own log goes to stderr by default ("hmac check failed" under a wrong key):
    // the error Umwelt returns says it better, and a log line must never be the only word.
    conn.pragma_update(None, "cipher_log_level", "NONE")?;
    Ok(conn)
}

static REGISTER_VEC: Once = Once::new();

pub(crate) fn register_sqlite_vec() {
    REGISTER_VEC.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        // SAFETY: sqlite3_vec_init has the signature SQLite expects of an extension entry point.
        unsafe {
            let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init));
        }
    });
}

/// How long a statement waits for another connection's lock (another process, or this one's
/// journal) before it fails with "database is locked".
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Begin a write transaction that takes the write lock at `BEGIN IMMEDIATE`, waiting its turn
/// through the busy timeout. A deferred transaction takes it at its first write, and if another
/// connection committed since its snapshot began, SQLite fails it with "database is locked" at
/// once, without asking the busy handler: two writers on one file then lose about one write in
/// twelve. Every write transaction on the file begins here.
pub(crate) fn write_tx(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    WRITES.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// Run `f` again while SQLite answers "busy" without having waited (a lock upgrade it refuses
/// at once), for at most [`BUSY_TIMEOUT`]. `f` must be safe to repeat.
fn retry_busy<T, E>(mut f: impl FnMut() -> std::result::Result<T, E>) -> std::result::Result<T, E>
where
    E: BusyError,
{
    let until = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match f() {
            Err(e) if e.is_busy() && std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// An error that may be SQLite's "database is locked".
trait BusyError {
    fn is_busy(&self) -> bool;
}

impl BusyError for rusqlite::Error {
    fn is_busy(&self) -> bool {
        self.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
    }
}

impl BusyError for Error {
    fn is_busy(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_busy())
    }
}

/// How many write transactions this process has begun: what is cached from the file is kept
/// only while this and the file's `PRAGMA data_version` (other connections' commits) stand.
pub(crate) static WRITES: AtomicU64 = AtomicU64::new(0);

/// A vector as the `claim_vector.embedding` column stores it: little-endian f32s.
fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Store {
    /// Open (or create) the store at `path`, with the embedder that the model resolver finds.
    /// Loads no model.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path, Arc::new(LazyEmbedder::new()))
    }

    /// Open with a given (possibly shared, possibly already loaded) embedder.
    /// Plain, unless the process runs with [`cipher::TEST_ENV`] on.
    pub fn open_with(path: impl AsRef<Path>, embedder: Arc<LazyEmbedder>) -> Result<Store> {
        Store::open_keyed(path, embedder, cipher::test_key())
    }

    /// Open an encrypted file with `key` (a new file is made encrypted), or, with no key, a
    /// plain one. A key that does not open the file is [`Error::WrongKey`], an encrypted file
    /// without a key [`Error::Locked`], a plain file with one [`Error::NotEncrypted`]: in each
    /// case nothing has been written.
    pub fn open_keyed(
        path: impl AsRef<Path>,
        embedder: Arc<LazyEmbedder>,
        key: Option<&Key>,
    ) -> Result<Store> {
        register_sqlite_vec();
        let test_keyed = matches!(
            (key.and_then(Key::random_bytes), cipher::test_key().and_then(Key::random_bytes)),
            (Some(a), Some(b)) if a == b
        );
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                crate::paths::private_dir(dir)?;
            }
        }
        // A conversion (encrypting in place) may have been cut short, or may have swapped the
        // file while this process waited to open it: finished, or opened again.
        let mut tries = 0;
        let (mut conn, key) = loop {
            let (conn, spec) = open_connection(&path, key)?;
            if retry_busy(|| conversion::finish_interrupted(&conn, &path))? {
                break (conn, spec);
            }
            tries += 1;
            if tries == 3 {
                return Err(Error::InvalidInput(format!(
                    "the memory file {} was replaced each time it was opened; try again",
                    path.display()
                )));
            }
        };
        // A new file is still in rollback mode: two processes creating it at once can each hold
        // a read lock while asking for the write lock, and SQLite answers one of them "busy" at
        // once instead of waiting (it would otherwise deadlock). Ask again until the timeout.
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
        // Every commit is on the disk before it returns (the log is synced): a saved dictation
        // deletes its draft once its memory is committed. Measured in docs/PERFORMANCE.md.
        conn.pragma_update(None, "synchronous", "FULL")?;
        // 64 MiB of pages kept by SQLite itself (the default is 2 MiB): a write to a large file
        // touches a few pages of each index, and reading each again from the OS costs a system
        // call (docs/PERFORMANCE.md, "Who holds what": transmit_batch 236 -> … ms). Off with
        // the optimisations: SQLite's own 2 MiB.
        if crate::optimisations::enabled() {
            conn.pragma_update(None, "cache_size", -65_536)?;
        }
        conn.pragma_update(None, "foreign_keys", "ON")?;
        retry_busy(|| schema::migrate(&mut conn))?;
        Ok(Store {
            conn: Mutex::new(conn),
            key,
            embedder,
            recordings: recordings::beside(&path),
            seal: std::sync::OnceLock::new(),
            test_keyed,
            path,
            indexes: Mutex::new(HashMap::new()),
            claims: Mutex::new(None),
            held_codes: Mutex::new(HashMap::new()),
            journal: Mutex::new(None),
            indexed: AtomicU64::new(0),
            scanned: AtomicU64::new(0),
        })
    }

    /// Whether the file is encrypted (opened with a key).
    pub fn is_encrypted(&self) -> bool {
        self.key.is_some()
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a large index's f32 vectors go: beside the store file, on the same disk (never the
    /// temporary folder, which may be memory), sealed if the store file is encrypted.
    fn spill_to(&self) -> Option<full_vectors::SpillTo> {
        let dir = self.path.parent()?;
        Some(full_vectors::SpillTo {
            dir: if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir.to_path_buf()
            },
            sealed: self.is_encrypted(),
        })
    }

    /// The embedder this store uses (loaded lazily).
    pub fn embedder(&self) -> &Arc<LazyEmbedder> {
        &self.embedder
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Move the write-ahead log into the main file (so the file can be copied alone).
    pub fn checkpoint(&self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    }

    /// The id of the holder whose name is `scope`, if it holds anything yet.
    fn holder_id(&self, scope: &str) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row("SELECT id FROM holder WHERE name = ?1", [scope], |r| {
                r.get(0)
            })
            .optional()?)
    }
}
