//! Events the shell emits to the web view (`listen(NAME, …)` in `ui/src/api.ts`).

/// Re-embedding after a model change: payload `ReembedProgress { done, total }`.
pub const REEMBED_PROGRESS: &str = "reembed-progress";

/// The voice started or stopped speaking: payload `SpeakingState`.
pub const SPEAKING: &str = "speaking";

/// Recordings a crash left behind were transcribed at start-up: payload `Recovery`.
pub const RECOVERED: &str = "recovered";
