//! The memory file at rest, as Settings → Privacy chose ([`Encryption`]): encrypted with a
//! random key kept in the system keyring (the default), encrypted with a passphrase asked for
//! at every start, or plain. [`open`] brings the file to that choice before it opens it: a
//! plain file is encrypted in place, an encrypted one made plain, or moved from one key to the
//! other (`store::conversion`: a kill at any step loses nothing and leaves a file that opens).
//!
//! What it never does: write memories in plain text without saying so (a keyring that cannot
//! be reached leaves a plain file plain and says why in [`Opened::warning`], for a warning that
//! stays in sight), replace or "repair" a file it cannot open (a missing or wrong key asks for
//! the passphrase, [`Opening::Ask`], with nothing changed), or keep a passphrase anywhere.
//!
//! The command line ([`key_for`]) opens what the app made: the key of an encrypted file comes
//! from the keyring unless a passphrase is given.

use std::path::Path;
use std::sync::Arc;

use crate::embed::LazyEmbedder;
use crate::error::{Error, Result};
use crate::keyring::KeyStore;
use crate::settings::Encryption;
use crate::store::cipher::{FileState, Key};
use crate::store::conversion;
use crate::Store;

/// The memory file, open.
pub struct Opened {
    pub store: Store,
    /// What was done to the file on the way in, for the user ("now encrypted").
    pub done: Option<String>,
    /// Why the file is not kept as the user chose (the keyring could not be reached, so it is
    /// plain), for a warning that stays in sight until it is not true any more.
    pub warning: Option<String>,
}

/// A passphrase is needed before the file can be opened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Ask {
    /// The user chooses a new passphrase (typed twice), rather than giving the one they chose.
    pub choose: bool,
    /// Why it is asked: for the prompt.
    pub reason: String,
}

/// What [`open`] came to.
pub enum Opening {
    Open(Box<Opened>),
    Ask(Ask),
}

/// Open the memory file at `path` kept as `choice` says, converting it first when it is kept
/// otherwise. `keyring` holds this file's random key; `passphrase` is what the user typed when
/// an earlier call asked for one. Nothing is written before a key is known to open the file.
pub fn open(
    path: &Path,
    embedder: Arc<LazyEmbedder>,
    choice: Encryption,
    keyring: &dyn KeyStore,
    passphrase: Option<&Key>,
) -> Result<Opening> {
    let state = FileState::of(path)?;
    if state == FileState::NotADatabase {
        // Damaged: the caller's error to handle (`damaged::open_or_set_aside`).
        return Store::open_keyed(path, embedder, None).map(|store| opened(store, None, None));
    }
    let opener = Opener {
        path,
        embedder,
        state,
        keyring,
        passphrase,
    };
    let opening = match choice {
        Encryption::Off => opener.plain(),
        Encryption::Keyring => opener.with_keyring(),
        Encryption::Passphrase => opener.with_passphrase(),
    }?;
    Ok(with_recordings_settled(opening))
}

/// The recordings follow the file as it was opened: sealed beside an encrypted file, plain
/// beside a plain one (`Store::settle_recordings`). Those that cannot be changed now stay as
/// they are, whole, with a warning; the next start goes on.
fn with_recordings_settled(opening: Opening) -> Opening {
    let Opening::Open(mut o) = opening else {
        return opening;
    };
    let problems = match o.store.settle_recordings() {
        Ok(p) => p,
        Err(e) => vec![e.to_string()],
    };
    if !problems.is_empty() {
        for p in &problems {
            tracing::warn!("a recording stays as it was: {p}");
        }
        let what = if o.store.is_encrypted() {
            "are not encrypted yet"
        } else {
            "are still encrypted"
        };
        let note = format!(
            "{} of your recordings {what}: {}. Umwelt tries again at its next start (free some space if the disk is full).",
            problems.len(),
            problems[0]
        );
        o.warning = Some(match o.warning.take() {
            Some(w) => format!("{w} {note}"),
            None => note,
        });
    }
    Opening::Open(o)
}

/// The key that opens the memory file at `path` for a command that was given none: the
/// keyring's, if the file is encrypted; `None` for a plain or new file.
pub fn key_for(path: &Path, keyring: &dyn KeyStore) -> Result<Option<Key>> {
    if FileState::of(path)? != FileState::Encrypted {
        return Ok(None);
    }
    match keyring.get() {
        Ok(Some(k)) => Ok(Some(k)),
        Ok(None) => {
            tracing::warn!("the keyring holds no key for {}", path.display());
            Err(Error::Locked(path.into()))
        }
        Err(e) => {
            tracing::warn!("{e}");
            Err(Error::Locked(path.into()))
        }
    }
}

fn opened(store: Store, done: Option<&str>, warning: Option<String>) -> Opening {
    Opening::Open(Box::new(Opened {
        store,
        done: done.map(String::from),
        warning,
    }))
}

fn ask(choose: bool, reason: impl Into<String>) -> Result<Opening> {
    Ok(Opening::Ask(Ask {
        choose,
        reason: reason.into(),
    }))
}

/// A wrong key is a question to ask again, any other error stays an error.
fn or_ask(r: Result<Opening>, reason: &str) -> Result<Opening> {
    match r {
        Err(Error::WrongKey(_)) => ask(false, reason),
        other => other,
    }
}

const WRONG_PASSPHRASE: &str =
    "That passphrase does not open your memory file. Nothing was changed; try again.";

/// One open of the memory file: the file, how it is stored now, and what may open it.
struct Opener<'a> {
    path: &'a Path,
    embedder: Arc<LazyEmbedder>,
    state: FileState,
    /// Where this file's random key is kept.
    keyring: &'a dyn KeyStore,
    /// What the user typed when an earlier open asked for a passphrase.
    passphrase: Option<&'a Key>,
}

impl<'a> Opener<'a> {
    /// The open's parts, as each way of keeping the file uses them (the embedder shared).
    fn parts(
        &self,
    ) -> (
        &'a Path,
        Arc<LazyEmbedder>,
        FileState,
        &'a dyn KeyStore,
        Option<&'a Key>,
    ) {
        (
            self.path,
            self.embedder.clone(),
            self.state,
            self.keyring,
            self.passphrase,
        )
    }

    /// Settings → Privacy is off: an encrypted file is made plain, with the keyring's key or the
    /// passphrase, and the keyring's entry removed.
    fn plain(&self) -> Result<Opening> {
        let (path, embedder, state, keyring, passphrase) = self.parts();
        if state != FileState::Encrypted {
            return Store::open_keyed(path, embedder, None).map(|s| opened(s, None, None));
        }
        let key = match passphrase {
        Some(k) => k.clone(),
        None => match keyring.get() {
            Ok(Some(k)) => k,
            Ok(None) => {
                return ask(false, "Encryption is turned off in Settings → Privacy, so Umwelt will make your memory file plain again. Give its passphrase to do so.")
            }
            Err(e) => {
                return ask(false, format!("Encryption is turned off in Settings → Privacy, but the key of your memory file cannot be read: {e}. Unlock the keyring and start Umwelt again, or give the file's passphrase if it has one."))
            }
        },
    };
        let reason = if passphrase.is_some() {
            WRONG_PASSPHRASE
        } else {
            "The key the keyring keeps for your memory file does not open it (was it encrypted with a passphrase, or on another computer?). Give its passphrase to make it plain."
        };
        match conversion::decrypt(path, &key) {
        Err(Error::WrongKey(_)) => return ask(false, reason),
        Err(e) => {
            return as_is(path, embedder, Some(&key), format!("Your memory file stays encrypted for now: it could not be made plain ({e}). Umwelt tries again at its next start."))
        }
        Ok(()) => {}
    }
        if let Err(e) = keyring.forget() {
            tracing::warn!("the key of the plain file stays in the keyring: {e}");
        }
        Store::open_keyed(path, embedder, None).map(|s| {
            opened(
                s,
                Some("Your memory file is no longer encrypted, as chosen in Settings → Privacy."),
                None,
            )
        })
    }

    /// The default: a random key in the system keyring. A plain or new file gets one (made and kept
    /// the first time); an encrypted file opens with it, or, encrypted with a passphrase, is moved
    /// to a random key once the passphrase is given.
    fn with_keyring(&self) -> Result<Opening> {
        let (path, embedder, state, keyring, passphrase) = self.parts();
        if state == FileState::Encrypted {
            if let Some(pass) = passphrase {
                // Encrypted with a passphrase: its key moves into the keyring, once the
                // passphrase is known to open it (a wrong one changes nothing, the keyring included).
                if let Err(e) = Store::open_keyed(path, embedder.clone(), Some(pass)) {
                    return or_ask(Err(e), WRONG_PASSPHRASE);
                }
                let fresh = match kept_new_key(keyring) {
                    Ok(k) => k,
                    Err(e) => {
                        let opening = Store::open_keyed(path, embedder, Some(pass)).map(|s| {
                        opened(s, None, Some(format!("Your memory file stays encrypted with your passphrase: its key could not be moved into the system keyring ({e}). Umwelt will ask for the passphrase at each start until the keyring can be reached.")))
                    });
                        return or_ask(opening, WRONG_PASSPHRASE);
                    }
                };
                if let Err(e) = conversion::rekey(path, pass, &fresh) {
                    if let Err(f) = keyring.forget() {
                        tracing::warn!("a key that opens nothing stays in the keyring: {f}");
                    }
                    return match e {
                    Error::WrongKey(_) => ask(false, WRONG_PASSPHRASE),
                    e => as_is(path, embedder, Some(pass), format!("Your memory file stays encrypted with your passphrase for now: its key could not be moved into the keyring ({e}). Umwelt tries again at its next start.")),
                };
                }
                return Store::open_keyed(path, embedder, Some(&fresh)).map(|s| {
                opened(s, Some("Your memory file's key is now kept in the system keyring: Umwelt will not ask for the passphrase again."), None)
            });
            }
            return match keyring.get() {
            Ok(Some(k)) => or_ask(
                Store::open_keyed(path, embedder, Some(&k)).map(|s| opened(s, None, None)),
                "The key the keyring keeps for your memory file does not open it (was it encrypted with a passphrase, or on another computer?). Nothing was changed. Give its passphrase.",
            ),
            Ok(None) => ask(false, "Your memory file is encrypted, and the keyring holds no key for it (it was encrypted with a passphrase, or on another computer). Give its passphrase."),
            Err(e) => ask(false, format!("Your memory file is encrypted, and its key cannot be read: {e}. Unlock the keyring and start Umwelt again, or give the file's passphrase if it has one.")),
        };
        }
        let key = match keyring.get() {
            Ok(Some(k)) => Ok(k),
            Ok(None) => kept_new_key(keyring),
            Err(e) => Err(e),
        };
        let key = match key {
        Ok(k) => k,
        Err(e) => {
            return Store::open_keyed(path, embedder, None).map(|s| {
                opened(s, None, Some(format!("Your memories are stored unencrypted: {e}. Unlock the keyring and start Umwelt again, or choose a passphrase in Settings → Privacy.")))
            })
        }
    };
        encrypt_or_create(
            path,
            embedder,
            state,
            &key,
            "Your memory file is now encrypted; its key is kept in the system keyring.",
        )
    }

    /// Settings → Privacy chose a passphrase: asked for at every start (chosen, the first time).
    fn with_passphrase(&self) -> Result<Opening> {
        let (path, embedder, state, keyring, passphrase) = self.parts();
        if state != FileState::Encrypted {
            let Some(pass) = passphrase else {
                return ask(true, "Choose the passphrase that will encrypt your memory file. Umwelt asks for it at every start; without it, nobody (not even you) can read your memories.");
            };
            return encrypt_or_create(
                path,
                embedder,
                state,
                pass,
                "Your memory file is now encrypted with your passphrase.",
            );
        }
        // Encrypted with the keyring's key (encryption by keyring was chosen before): the user
        // chooses a passphrase, and the file moves to it. The entry is removed whenever a file
        // leaves the keyring, so an entry means this.
        let from_keyring = keyring.get().ok().flatten();
        match (passphrase, from_keyring) {
        (None, Some(_)) => ask(true, "Choose the passphrase that will encrypt your memory file from now on, instead of the key in the system keyring. Umwelt asks for it at every start; without it, nobody can read your memories."),
        (None, None) => ask(false, "Give the passphrase of your memory file."),
        (Some(pass), Some(old)) => {
            match conversion::rekey(path, &old, pass) {
                Ok(()) => {
                    if let Err(e) = keyring.forget() {
                        tracing::warn!("the old key stays in the keyring: {e}");
                    }
                    Store::open_keyed(path, embedder, Some(pass)).map(|s| {
                        opened(s, Some("Your memory file is now encrypted with your passphrase."), None)
                    })
                }
                // The keyring's key does not open it: then the file has a passphrase already.
                Err(Error::WrongKey(_)) => or_ask(
                    Store::open_keyed(path, embedder, Some(pass)).map(|s| opened(s, None, None)),
                    WRONG_PASSPHRASE,
                ),
                Err(e) => as_is(path, embedder, Some(&old), format!("Your memory file stays encrypted with the key in the system keyring for now: it could not be moved to your passphrase ({e}). Umwelt asks again at its next start.")),
            }
        }
        (Some(pass), None) => or_ask(
            Store::open_keyed(path, embedder, Some(pass)).map(|s| opened(s, None, None)),
            WRONG_PASSPHRASE,
        ),
    }
    }
}

/// A conversion that could not be made now (another program has the file open, the disk is
/// full): the file opens as it is, with `key`, and `warning` says so.
fn as_is(
    path: &Path,
    embedder: Arc<LazyEmbedder>,
    key: Option<&Key>,
    warning: String,
) -> Result<Opening> {
    tracing::warn!("{warning}");
    Store::open_keyed(path, embedder, key).map(|s| opened(s, None, Some(warning)))
}

/// A new random key, kept in the keyring and read back before any file depends on it.
fn kept_new_key(keyring: &dyn KeyStore) -> std::result::Result<Key, crate::keyring::Unavailable> {
    let key = Key::random().map_err(|e| crate::keyring::Unavailable(e.to_string()))?;
    keyring.put(&key)?;
    match keyring.get()? {
        Some(back) if back.random_bytes() == key.random_bytes() => Ok(key),
        _ => Err(crate::keyring::Unavailable(
            "it did not give back the key it was given".into(),
        )),
    }
}

/// A plain file encrypted in place with `key`, or a new file made encrypted. A plain file that
/// cannot be encrypted now (another program has it open) opens plain, with a warning.
fn encrypt_or_create(
    path: &Path,
    embedder: Arc<LazyEmbedder>,
    state: FileState,
    key: &Key,
    done: &str,
) -> Result<Opening> {
    if state == FileState::Plain {
        if let Err(e) = conversion::encrypt(path, key) {
            tracing::warn!("encrypting {}: {e}", path.display());
            return Store::open_keyed(path, embedder, None).map(|s| {
                opened(s, None, Some(format!("Your memories are stored unencrypted for now: the memory file could not be encrypted ({e}). Umwelt tries again at its next start.")))
            });
        }
        return Store::open_keyed(path, embedder, Some(key)).map(|s| opened(s, Some(done), None));
    }
    Store::open_keyed(path, embedder, Some(key)).map(|s| opened(s, None, None))
}
