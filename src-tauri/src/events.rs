//! Events the shell emits to the web view (`listen(NAME, …)` in `ui/src/api.ts`).

/// Re-embedding after a model change: payload `ReembedProgress { done, total }`.
pub const REEMBED_PROGRESS: &str = "reembed-progress";

/// The voice started or stopped speaking: payload `SpeakingState`.
pub const SPEAKING: &str = "speaking";

/// Recordings a crash left behind were transcribed at start-up: payload `Recovery`.
pub const RECOVERED: &str = "recovered";

/// A dictation started, stopped, has a draft ready or failed: payload `DictationState`.
pub const DICTATION_STATE: &str = "dictation-state";

/// What a dictation has heard so far (final and partial text): payload `Heard`.
pub const DICTATION_HEARD: &str = "dictation-heard";

/// The microphone's level while dictating, ten times a second: payload `Level`.
pub const DICTATION_LEVEL: &str = "dictation-level";

/// Settings' microphone check, ten times a second and once when it ends: payload
/// `MicrophoneLevel`.
pub const MICROPHONE_LEVEL: &str = "microphone-level";
