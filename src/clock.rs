//! The wall clock, in the one unit the engine stores: Unix time in milliseconds.

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix time in milliseconds (0 if the system clock is before 1970).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
