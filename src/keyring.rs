//! The memory file's key in the system keyring: the Secret Service over D-Bus (GNOME Keyring,
//! KWallet, KeePassXC), through the `keyring` crate. One entry per memory file, named by the
//! file's absolute path under the service "Umwelt", so two data folders keep two keys.
//!
//! A keyring can be absent (no Secret Service on the bus: a headless session), locked (and its
//! unlock prompt never answered), or slow: every call answers within [`ANSWER_WITHIN`] or says
//! the keyring is [`Unavailable`], so a start-up never hangs on it. The key is never logged.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::store::cipher::{Key, KEY_BYTES};

/// The keyring service name of Umwelt's entries.
pub const SERVICE: &str = "Umwelt";
/// How long a keyring call may take before it counts as unavailable (an unlock prompt left
/// unanswered, a Secret Service that does not reply).
pub const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// The keyring could not be used; the reason, for the user.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the system keyring is not available: {0}")]
pub struct Unavailable(pub String);

/// Where a memory file's key is kept: the system keyring ([`SystemKeyring`]).
pub trait KeyStore: Send + Sync {
    /// The key kept for the file, if any.
    fn get(&self) -> Result<Option<Key>, Unavailable>;
    /// Keep `key` for the file, replacing any other.
    fn put(&self, key: &Key) -> Result<(), Unavailable>;
    /// Remove the file's key (after the file was made plain again).
    fn forget(&self) -> Result<(), Unavailable>;
}

/// The system keyring's entry for one memory file.
pub struct SystemKeyring {
    user: String,
}

impl SystemKeyring {
    /// The entry for the memory file at `path` (made absolute: the same file, the same entry).
    pub fn for_file(path: &Path) -> SystemKeyring {
        let abs = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
        SystemKeyring {
            user: abs.to_string_lossy().into_owned(),
        }
    }

    /// Run `f` on the entry on a thread of its own, for at most [`ANSWER_WITHIN`].
    fn call<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&::keyring::Entry) -> ::keyring::Result<T> + Send + 'static,
    ) -> Result<T, Unavailable> {
        let user = self.user.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("umwelt-keyring".into())
            .spawn(move || {
                let r = ::keyring::Entry::new(SERVICE, &user).and_then(|e| f(&e));
                let _ = tx.send(r);
            })
            .map_err(|e| Unavailable(format!("could not start a thread to ask it ({e})")))?;
        match rx.recv_timeout(ANSWER_WITHIN) {
            Ok(r) => r.map_err(|e| Unavailable(describe(what, &e))),
            Err(_) => Err(Unavailable(format!(
                "it did not answer within {} s while {what} (is it locked, with its unlock prompt unanswered?)",
                ANSWER_WITHIN.as_secs()
            ))),
        }
    }
}

impl KeyStore for SystemKeyring {
    fn get(&self) -> Result<Option<Key>, Unavailable> {
        let secret = self.call("reading the key", |e| match e.get_secret() {
            Ok(s) => Ok(Some(s)),
            Err(::keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(e),
        })?;
        match secret {
            None => Ok(None),
            Some(s) => Key::from_bytes(&s).map(Some).ok_or_else(|| {
                Unavailable(format!(
                    "its entry for Umwelt holds {} bytes, not a {KEY_BYTES}-byte key",
                    s.len()
                ))
            }),
        }
    }

    fn put(&self, key: &Key) -> Result<(), Unavailable> {
        let bytes = key
            .random_bytes()
            .ok_or_else(|| Unavailable("a passphrase is never kept in the keyring".into()))?
            .to_vec();
        let bytes = zeroize::Zeroizing::new(bytes);
        self.call("keeping the key", move |e| e.set_secret(&bytes))
    }

    fn forget(&self) -> Result<(), Unavailable> {
        self.call("removing the key", |e| match e.delete_credential() {
            Ok(()) | Err(::keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(e),
        })
    }
}

/// The keyring's error in a sentence (its platform detail included, never a secret).
fn describe(what: &str, e: &::keyring::Error) -> String {
    match e {
        ::keyring::Error::NoStorageAccess(inner) => {
            format!("it is locked or refused access while {what} ({inner})")
        }
        ::keyring::Error::PlatformFailure(inner) => {
            format!("no Secret Service answered while {what} ({inner})")
        }
        other => format!("{what} failed ({other})"),
    }
}
