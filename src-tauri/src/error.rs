//! The one error type that crosses into the web view. It carries the engine's message, which
//! already says what happened and what to do, and a kind the UI can branch on.

use serde::Serialize;
use ts_rs::TS;

#[derive(Debug, Clone, Serialize, TS)]
pub struct CommandError {
    /// `input`, `not_found`, `model`, `audio`, `busy` or `internal`.
    pub kind: String,
    /// A sentence for the user.
    pub message: String,
}

impl CommandError {
    pub fn new(kind: &str, message: impl Into<String>) -> CommandError {
        CommandError {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

impl From<umwelt::Error> for CommandError {
    fn from(e: umwelt::Error) -> CommandError {
        use umwelt::Error::*;
        let kind = match &e {
            InvalidInput(_) => "input",
            NotFound(_) => "not_found",
            ModelMissing { .. } | ModelCorrupt { .. } | ModelLoad { .. } => "model",
            Audio(_) => "audio",
            Cancelled => "cancelled",
            Db(_) | Io { .. } => "internal",
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
