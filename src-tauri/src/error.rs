//! The one error type that crosses into the web view. It carries the engine's message, which
//! already says what happened and what to do, and a kind the UI can branch on.

use serde::Serialize;

/// What kind of failure it was; the UI decides where to show it by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// What the user gave cannot be used (shown beside the field it came from).
    Input,
    /// What was asked for does not exist (any more).
    NotFound,
    /// A file of the user's is in the way; asking again with their confirmation replaces it.
    Exists,
    /// A model file is missing, damaged or would not load.
    Model,
    /// The microphone or the speaker failed.
    Audio,
    /// Something else holds what was asked for (a dictation, a benchmark): the message says what.
    Busy,
    /// The memory file is encrypted and the key given (or none) does not open it.
    Locked,
    /// The user cancelled it.
    Cancelled,
    /// A fault of the app or the machine (the disk, the database).
    Internal,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CommandError {
    pub kind: ErrorKind,
    /// A sentence for the user.
    pub message: String,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CommandError {
        CommandError {
            kind,
            message: message.into(),
        }
    }
}

impl From<umwelt::Error> for CommandError {
    fn from(e: umwelt::Error) -> CommandError {
        use umwelt::Error::*;
        let kind = match &e {
            InvalidInput(_) => ErrorKind::Input,
            NotFound(_) => ErrorKind::NotFound,
            Exists(_) => ErrorKind::Exists,
            ModelMissing { .. } | ModelCorrupt { .. } | ModelLoad { .. } => ErrorKind::Model,
            Audio(_) | NotTyped(_) => ErrorKind::Audio,
            Locked(_) | WrongKey(_) => ErrorKind::Locked,
            NotEncrypted(_) => ErrorKind::Input,
            Cancelled => ErrorKind::Cancelled,
            Db(_) | Io { .. } | Crashed { .. } => ErrorKind::Internal,
        };
        CommandError::new(kind, e.to_string())
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type CmdResult<T> = Result<T, CommandError>;
