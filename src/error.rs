//! The engine's one error type. Every message says what happened and, where the user can act,
//! what to do about it.

use std::path::PathBuf;

/// Result alias used across the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model file is not in any place the resolver looks.
    #[error("model file '{name}' was not found (looked in: {looked_in}). Run `scripts/setup-models.sh` to fetch and prepare the models, or set UMWELT_MODELS_DIR to a folder that holds them.")]
    ModelMissing { name: String, looked_in: String },

    /// A model file is there but is not the file the manifest pins.
    #[error("model file '{path}' is damaged or not the expected version ({detail}). Delete it and run `scripts/setup-models.sh` to fetch it again.")]
    ModelCorrupt { path: PathBuf, detail: String },

    /// A model loaded but could not be used (ONNX Runtime or whisper.cpp refused it).
    #[error("could not use the model '{name}': {detail}")]
    ModelLoad { name: String, detail: String },

    /// Input the caller gave us that we will not store or search with.
    #[error("{0}")]
    InvalidInput(String),

    /// A file the user owns is where something would be written, and they have not said it may
    /// be replaced.
    #[error("{} already exists. Choose another name, or confirm that it may be replaced.", .0.display())]
    Exists(PathBuf),

    /// Something asked for by id does not exist.
    #[error("{0} was not found")]
    NotFound(String),

    /// The database refused an operation.
    #[error("the memory database failed: {0}. Your memories are unchanged; if this repeats, check free disk space and file permissions.")]
    Db(#[from] rusqlite::Error),

    /// The memory file is encrypted and no key was given.
    #[error("the memory file {} does not begin as a plain SQLite file: it is encrypted (or damaged), and no key was given to open it. Unlock the system keyring, or give its passphrase (umwelt-cli --passphrase-file FILE), or make it plain again (umwelt-cli --passphrase-file FILE decrypt). Nothing was changed.", .0.display())]
    Locked(PathBuf),

    /// The key given does not open the memory file.
    #[error("the memory file {} could not be opened with this key: the passphrase is wrong, or the file was encrypted with another key. Nothing was changed; try again with the right passphrase.", .0.display())]
    WrongKey(PathBuf),

    /// A key was given for a memory file that is not encrypted.
    #[error("the memory file {} is not encrypted, so no key opens it. Open it without one, or encrypt it first (umwelt-cli encrypt).", .0.display())]
    NotEncrypted(PathBuf),

    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    /// The user stopped the work (speaking, a model run) before it finished.
    #[error("stopped")]
    Cancelled,

    /// The microphone or an audio file could not be used.
    #[error("{0}")]
    Audio(String),

    /// A text could not be typed into the focused app (`typing.rs`); it is kept where it was.
    #[error("the text was not typed: {0}")]
    NotTyped(String),

    /// Work on another thread panicked (a bug); what it was doing and the panic's message.
    #[error("{what} failed unexpectedly ({detail}). This is a fault in Umwelt: nothing was lost; try again, and report it if it repeats.")]
    Crashed { what: String, detail: String },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }

    /// A panic's payload as an error: `what` was being done when it happened.
    pub fn from_panic(what: impl Into<String>, payload: Box<dyn std::any::Any + Send>) -> Error {
        let detail = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "no message".to_string()
        };
        Error::Crashed {
            what: what.into(),
            detail,
        }
    }
}

/// Run `f`, turning a panic inside it into [`Error::Crashed`] (`what` names the work): a worker
/// thread reports a bug as an error instead of dying with it.
pub fn catch_panic<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(Error::from_panic(what, payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_that_says_what_was_being_done() {
        let e = catch_panic::<()>("hearing the dictation", || {
            panic!("Initial prompt contains null byte")
        })
        .unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("hearing the dictation") && m.contains("null byte"),
            "{m}"
        );
        assert_eq!(catch_panic("x", || Ok(3)).unwrap(), 3);
    }
}
