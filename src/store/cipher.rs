//! Encryption at rest of the memory file: SQLCipher (AES-256 pages, each with its HMAC), keyed
//! by a [`Key`].
//!
//! - A **random key** (32 bytes, kept in the system keyring by the app) is given to SQLCipher
//!   as a raw key: no key derivation at open.
//! - A **passphrase** is stretched with Argon2id into a raw key. Its salt is the file's own:
//!   SQLCipher begins every encrypted file with 16 random bytes, and a raw key given as
//!   `x'<key><salt>'` makes a new file begin with that salt. So nothing but the file is needed
//!   to derive its key again, and no key, salt or derived value is ever written beside it.
//!
//! A key never appears in a log, an error or `Debug` output. Whether a file is plain, encrypted
//! or new is read from its first 16 bytes ([`FileState::of`]), so that a wrong key, a missing
//! key and a plain file each get their own message, and none of them is taken for damage.

use std::io::Read;
use std::path::Path;

use rusqlite::Connection;
use zeroize::Zeroizing;

use crate::error::{Error, Result};

/// Bytes in a key (AES-256).
pub const KEY_BYTES: usize = 32;
/// The smallest page SQLite and SQLCipher write: an encrypted file is a whole number of them.
const MIN_PAGE: u64 = 512;
/// Bytes in SQLCipher's per-file salt, the first bytes of an encrypted file.
const SALT_BYTES: usize = 16;
/// Argon2id's cost: 64 MiB of memory, 3 passes, one lane (RFC 9106's second recommended
/// setting, above OWASP's minimum). About a third of a second on a 2-core laptop, once per start.
const ARGON2_MEMORY_KIB: u32 = 64 * 1024;
const ARGON2_PASSES: u32 = 3;

/// What opens an encrypted memory file.
#[derive(Clone)]
pub enum Key {
    /// A random key (the app keeps it in the system keyring).
    Random(Zeroizing<[u8; KEY_BYTES]>),
    /// A passphrase; the key is derived from it and the file's salt with Argon2id.
    Passphrase(Zeroizing<String>),
}

impl std::fmt::Debug for Key {
    /// Says which kind of key it is, never the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Key::Random(_) => "Key::Random(..)",
            Key::Passphrase(_) => "Key::Passphrase(..)",
        })
    }
}

impl Key {
    /// A new random key from the operating system's generator.
    pub fn random() -> Result<Key> {
        let mut k = Zeroizing::new([0u8; KEY_BYTES]);
        getrandom::fill(k.as_mut())
            .map_err(|e| Error::io("drawing a random key")(std::io::Error::other(e.to_string())))?;
        Ok(Key::Random(k))
    }

    /// A random key from the bytes the keyring gave back; `None` if they are not a key.
    pub fn from_bytes(bytes: &[u8]) -> Option<Key> {
        let k: [u8; KEY_BYTES] = bytes.try_into().ok()?;
        Some(Key::Random(Zeroizing::new(k)))
    }

    /// The passphrase in `path` (for scripts and tests: `--passphrase-file`): the file's text
    /// without one trailing line break. An empty passphrase is refused.
    pub fn from_passphrase_file(path: &Path) -> Result<Key> {
        let mut text = Zeroizing::new(String::new());
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(Error::io(format!(
                "reading the passphrase file {}",
                path.display()
            )))?;
        let pass = Zeroizing::new(text.trim_end_matches(['\n', '\r']).to_string());
        if pass.is_empty() {
            return Err(Error::InvalidInput(format!(
                "the passphrase file {} is empty. Write the passphrase in it (one line).",
                path.display()
            )));
        }
        Ok(Key::Passphrase(pass))
    }

    /// A passphrase typed by the user.
    pub fn passphrase(text: &str) -> Result<Key> {
        if text.is_empty() {
            return Err(Error::InvalidInput("the passphrase is empty".into()));
        }
        Ok(Key::Passphrase(Zeroizing::new(text.to_string())))
    }

    /// The raw bytes of a random key, to be kept in the keyring; `None` for a passphrase.
    pub fn random_bytes(&self) -> Option<&[u8; KEY_BYTES]> {
        match self {
            Key::Random(k) => Some(k),
            Key::Passphrase(_) => None,
        }
    }
}

/// `UMWELT_TEST_ENCRYPTION=on`: every store this process opens without a key of its own
/// ([`crate::Store::open`], [`crate::Store::open_with`]) is encrypted with [`test_key`], as are
/// those of the processes it starts. For the harness's cost of encryption (encrypted against
/// plain, in one run) and for running tests on encrypted files; never for memories: the key is
/// written here, in the source. The app opens its own file with its own key.
pub const TEST_ENV: &str = "UMWELT_TEST_ENCRYPTION";

/// The public test key, when [`TEST_ENV`] is `on` (read once per process).
pub fn test_key() -> Option<&'static Key> {
    static KEY: std::sync::OnceLock<Option<Key>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        (std::env::var(TEST_ENV).as_deref() == Ok("on")).then(|| {
            let mut k = [0u8; KEY_BYTES];
            for (i, b) in k.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(37).wrapping_add(11);
            }
            Key::Random(Zeroizing::new(k))
        })
    })
    .as_ref()
}

/// How a memory file is stored, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Absent or empty: whatever opens it first decides.
    New,
    /// Plain SQLite (begins "SQLite format 3").
    Plain,
    /// Whole pages that do not begin as SQLite: an encrypted file (or a damaged one that kept
    /// its length: only a key can tell, so it is never taken for damage).
    Encrypted,
    /// Neither: not a database at all, or a damaged one (a file of whole pages is never this).
    NotADatabase,
}

impl FileState {
    pub fn of(path: &Path) -> Result<FileState> {
        let mut f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::New),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()))(e)),
        };
        let mut head = [0u8; SALT_BYTES];
        let n = read_up_to(&mut f, &mut head)
            .map_err(Error::io(format!("reading {}", path.display())))?;
        let len = f
            .metadata()
            .map_err(Error::io(format!("reading {}", path.display())))?
            .len();
        Ok(if n == 0 {
            FileState::New
        } else if n == SALT_BYTES && &head == b"SQLite format 3\0" {
            FileState::Plain
        } else if len % MIN_PAGE == 0 {
            FileState::Encrypted
        } else {
            FileState::NotADatabase
        })
    }
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The value of `PRAGMA key` that opens one file with one key: derived once per open and
/// kept (zeroed when dropped) for the store's other connections.
#[derive(Clone)]
pub(crate) struct KeySpec(Zeroizing<String>);

impl std::fmt::Debug for KeySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySpec(..)")
    }
}

impl KeySpec {
    /// The key spec for the file at `path` (existing or new) under `key`.
    pub(crate) fn for_file(key: &Key, path: &Path) -> Result<KeySpec> {
        match key {
            Key::Random(k) => Ok(KeySpec(Zeroizing::new(format!("x'{}'", hex(&k[..]))))),
            Key::Passphrase(p) => {
                let salt = match FileState::of(path)? {
                    FileState::Encrypted => file_salt(path)?,
                    _ => {
                        let mut s = [0u8; SALT_BYTES];
                        getrandom::fill(&mut s).map_err(|e| {
                            Error::io("drawing a salt")(std::io::Error::other(e.to_string()))
                        })?;
                        s
                    }
                };
                let derived = derive(p.as_bytes(), &salt)?;
                Ok(KeySpec(Zeroizing::new(format!(
                    "x'{}{}'",
                    hex(&derived[..]),
                    hex(&salt)
                ))))
            }
        }
    }

    /// Key a connection just opened on `path` (before any other statement) and check that the
    /// key opens it: a wrong key is [`Error::WrongKey`], and nothing has been written.
    pub(crate) fn apply(&self, conn: &Connection, path: &Path) -> Result<()> {
        let opens = |hmac: &str| -> Result<bool> {
            // The value is a blob literal of hex digits made here, never user text.
            conn.execute_batch(&Zeroizing::new(format!("PRAGMA key = \"{}\";", &*self.0)))?;
            set_hmac(conn, "main", hmac)?;
            match conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            }) {
                Ok(_) => Ok(true),
                Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) => {
                    Ok(false)
                }
                Err(e) => Err(e.into()),
            }
        };
        if opens(HMAC)? || opens(HMAC_BEFORE)? {
            Ok(())
        } else {
            Err(Error::WrongKey(path.to_path_buf()))
        }
    }

    /// Attach the file at `path` as `name`, keyed with this spec (for a new file: it takes
    /// this spec's salt). The key is bound, never part of the statement's text.
    pub(crate) fn attach(&self, conn: &Connection, path: &str, name: &str) -> Result<()> {
        conn.execute(
            &format!("ATTACH DATABASE ?1 AS {name} KEY ?2"),
            [path, self.0.as_str()],
        )?;
        set_hmac(conn, name, HMAC)
    }
}

/// The HMAC of each page of a file this version makes: SHA-256, where SQLCipher 4's default is
/// SHA-512. Both are sound for a page's tag (SQLCipher 3 used SHA-1); SHA-256 costs half as much
/// on every page read from or written to the file (the CPU's SHA extensions: 3.0 against 6.8 µs
/// for a 4 KiB page on the Xeon of docs/PERFORMANCE.md), which is most of what encryption adds.
const HMAC: &str = "HMAC_SHA256";
/// The HMAC of files made before that choice (SQLCipher's default): they open as they are.
const HMAC_BEFORE: &str = "HMAC_SHA512";

/// Set the page HMAC of the database `schema` of `conn`, before its first page is read.
fn set_hmac(conn: &Connection, schema: &str, hmac: &str) -> Result<()> {
    conn.execute_batch(&format!("PRAGMA {schema}.cipher_hmac_algorithm = {hmac};"))?;
    Ok(())
}

/// Key a connection of one's own on an encrypted memory file (for tools and tests that read
/// the file's tables directly): `key` must open it ([`Error::WrongKey`] if not).
pub fn unlock(conn: &Connection, path: &Path, key: &Key) -> Result<()> {
    KeySpec::for_file(key, path)?.apply(conn, path)
}

/// The salt an encrypted file begins with.
fn file_salt(path: &Path) -> Result<[u8; SALT_BYTES]> {
    let mut f =
        std::fs::File::open(path).map_err(Error::io(format!("reading {}", path.display())))?;
    let mut s = [0u8; SALT_BYTES];
    f.read_exact(&mut s)
        .map_err(Error::io(format!("reading {}", path.display())))?;
    Ok(s)
}

/// Argon2id of a passphrase with a file's salt.
fn derive(pass: &[u8], salt: &[u8; SALT_BYTES]) -> Result<Zeroizing<[u8; KEY_BYTES]>> {
    use argon2::{Algorithm, Argon2, Params, Version};
    let params = Params::new(ARGON2_MEMORY_KIB, ARGON2_PASSES, 1, Some(KEY_BYTES))
        .expect("fixed Argon2 parameters are valid");
    let mut out = Zeroizing::new([0u8; KEY_BYTES]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(pass, salt, out.as_mut())
        .map_err(|e| Error::InvalidInput(format!("the passphrase could not be used: {e}")))?;
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02X}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file keyed by hand with `spec` and `hmac`, holding one row; `false` if the key and
    /// HMAC do not open it.
    fn opens_with(path: &Path, spec: &KeySpec, hmac: &str) -> bool {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(&format!("PRAGMA key = \"{}\";", &*spec.0))
            .unwrap();
        set_hmac(&conn, "main", hmac).unwrap();
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .is_ok_and(|n| n == 1)
    }

    /// New files (made by a keyed connection, or attached and exported into) take SHA-256 page
    /// HMACs; a file made with SQLCipher's SHA-512 default before still opens, as it is, and a
    /// wrong key is still told from either.
    #[test]
    fn new_files_take_sha256_hmacs_and_files_made_before_still_open() {
        let dir = tempfile::tempdir().unwrap();
        let key = Key::random().unwrap();
        // Made before: SQLCipher's default.
        let before = dir.path().join("before.db");
        let spec = KeySpec::for_file(&key, &before).unwrap();
        {
            let conn = Connection::open(&before).unwrap();
            conn.execute_batch(&format!("PRAGMA key = \"{}\";", &*spec.0))
                .unwrap();
            conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
                .unwrap();
        }
        assert!(opens_with(&before, &spec, HMAC_BEFORE));
        assert!(!opens_with(&before, &spec, HMAC));
        let conn = Connection::open(&before).unwrap();
        spec.apply(&conn, &before).unwrap();
        let n: i64 = conn.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        let other = KeySpec::for_file(&Key::random().unwrap(), &before).unwrap();
        let conn = Connection::open(&before).unwrap();
        assert!(matches!(
            other.apply(&conn, &before),
            Err(Error::WrongKey(_))
        ));

        // Made now, by a keyed connection.
        let new = dir.path().join("new.db");
        let spec = KeySpec::for_file(&key, &new).unwrap();
        let conn = Connection::open(&new).unwrap();
        spec.apply(&conn, &new).unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        drop(conn);
        assert!(opens_with(&new, &spec, HMAC));
        assert!(!opens_with(&new, &spec, HMAC_BEFORE));

        // Made now, as the copy of a conversion.
        let plain = Connection::open(dir.path().join("plain.db")).unwrap();
        plain
            .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let copy = dir.path().join("copy.db");
        let spec = KeySpec::for_file(&key, &copy).unwrap();
        spec.attach(&plain, copy.to_str().unwrap(), "converting")
            .unwrap();
        plain
            .query_row("SELECT sqlcipher_export('converting')", [], |_| Ok(()))
            .unwrap();
        plain.execute_batch("DETACH DATABASE converting").unwrap();
        assert!(opens_with(&copy, &spec, HMAC));
        assert!(!opens_with(&copy, &spec, HMAC_BEFORE));
    }

    #[test]
    fn a_key_is_never_printed() {
        let k = Key::passphrase("correct horse battery staple").unwrap();
        let spec = KeySpec::for_file(&k, Path::new("/nonexistent/m.sqlite")).unwrap();
        let shown = format!("{k:?} {spec:?}");
        assert!(!shown.contains("horse"), "{shown}");
        assert!(!shown.contains(&spec.0[2..20]), "{shown}");
        let r = Key::random().unwrap();
        let raw = hex(r.random_bytes().unwrap());
        assert!(!format!("{r:?}").contains(&raw[..8]));
    }

    #[test]
    fn the_same_passphrase_and_salt_give_the_same_key_and_another_salt_another() {
        let a = derive(b"pass", &[1; SALT_BYTES]).unwrap();
        let b = derive(b"pass", &[1; SALT_BYTES]).unwrap();
        let c = derive(b"pass", &[2; SALT_BYTES]).unwrap();
        let d = derive(b"Pass", &[1; SALT_BYTES]).unwrap();
        assert_eq!(*a, *b);
        assert_ne!(*a, *c);
        assert_ne!(*a, *d);
    }

    #[test]
    fn a_file_is_new_plain_encrypted_or_not_a_database_by_its_first_bytes_and_length() {
        let dir = tempfile::tempdir().unwrap();
        let f = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            FileState::of(&p).unwrap()
        };
        assert_eq!(
            FileState::of(&dir.path().join("absent")).unwrap(),
            FileState::New
        );
        assert_eq!(f("empty", b""), FileState::New);
        let mut plain = b"SQLite format 3\0".to_vec();
        plain.resize(4096, 0);
        assert_eq!(f("plain", &plain), FileState::Plain);
        assert_eq!(f("pages", &[0x5a; 8192]), FileState::Encrypted);
        assert_eq!(
            f("text", b"this was never a database"),
            FileState::NotADatabase
        );
        assert_eq!(f("cut", &[0x5a; 5000]), FileState::NotADatabase);
    }

    #[test]
    fn a_passphrase_file_loses_only_its_last_line_break_and_may_not_be_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pass");
        std::fs::write(&p, "  two words \n").unwrap();
        match Key::from_passphrase_file(&p).unwrap() {
            Key::Passphrase(s) => assert_eq!(s.as_str(), "  two words "),
            other => panic!("{other:?}"),
        }
        std::fs::write(&p, "\n").unwrap();
        let e = Key::from_passphrase_file(&p).unwrap_err().to_string();
        assert!(e.contains("is empty"), "{e}");
        let e = Key::from_passphrase_file(&dir.path().join("none"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("reading the passphrase file"), "{e}");
    }
}
