//! Events the shell emits to the web view, and the one way the managers send them ([`Emit`]).
//! Each payload is a type of its own whose name is the event's (`DictationState` is
//! `dictation-state`): `ui/src/bindings.ts` gets a typed `events.dictationState.listen(…)` for
//! each, generated from the list in `crate::ipc`.
//! The managers never hold an `AppHandle`: they hold an `Arc<dyn Emit>`, which the app backs with
//! its handle and a test with a list it can read.

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, Emitter, Runtime};
use tauri_specta::Event as Named;
use umwelt::speech::{Draft, Heard, Recovery};
use umwelt::store::ReembedProgress;
use umwelt::voice::SpeechReport;
use umwelt::Memory;

/// Where a dictation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DictationPhase {
    /// Nothing being recorded.
    Idle,
    /// Recording; partial text arrives as `dictation-heard`.
    Listening,
    /// Stopped; the last words are being transcribed.
    Transcribing,
    /// A draft is ready to be read, edited and saved.
    Ready,
    /// It failed: the message says why (the audio is kept if there was any).
    Failed,
}

/// A dictation started, stopped, has a draft ready or failed.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct DictationState {
    pub phase: DictationPhase,
    /// The microphone in use (while listening).
    pub device: Option<String>,
    /// The draft it became (none when After dictation saved it as a memory).
    pub draft: Option<Draft>,
    /// The memory After dictation → "Type it, and save it" saved it as.
    pub memory: Option<Memory>,
    /// Whether it was typed into the focused app.
    pub typed: bool,
    pub message: Option<String>,
}

impl DictationState {
    pub fn new(phase: DictationPhase) -> DictationState {
        DictationState {
            phase,
            device: None,
            draft: None,
            memory: None,
            typed: false,
            message: None,
        }
    }

    pub fn failed(message: String) -> DictationState {
        DictationState {
            message: Some(message),
            ..DictationState::new(DictationPhase::Failed)
        }
    }
}

/// The microphone's level while dictating, ten times a second.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct DictationLevel {
    /// Peak of the latest block, 0..1.
    pub peak: f32,
    pub seconds: f32,
}

/// Settings' microphone check, ten times a second and once when it ends.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct MicrophoneLevel {
    /// The device being checked.
    pub device: String,
    /// Peak of the latest block, 0..1.
    pub peak: f32,
    /// The check is over (stopped, timed out, or the device was lost).
    pub done: bool,
    /// Why it ended, when it was not stopped.
    pub problem: Option<String>,
}

/// The voice started or stopped speaking.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct Speaking {
    pub speaking: bool,
    /// What is being read (the first 80 characters).
    pub text: String,
    /// Set when the reply has ended: what it took.
    pub report: Option<SpeechReport>,
    /// Set when it failed: what happened and what to do.
    pub error: Option<String>,
}

/// What a dictation has heard so far, final and partial text.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
#[serde(transparent)]
pub struct DictationHeard(pub Heard);

/// Recordings a crash left behind, transcribed into drafts at start-up.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
#[serde(transparent)]
pub struct Recovered(pub Recovery);

/// Re-embedding after a model change: how far it is.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
#[serde(transparent)]
pub struct Reembedding(pub ReembedProgress);

/// Every event the shell sends.
#[derive(Debug, Clone)]
pub enum Event {
    Reembedding(Reembedding),
    Speaking(Speaking),
    Recovered(Recovered),
    DictationState(DictationState),
    DictationHeard(DictationHeard),
    DictationLevel(DictationLevel),
    MicrophoneLevel(MicrophoneLevel),
}

/// The events, for the generated bindings (`crate::ipc`).
pub fn all() -> tauri_specta::Events {
    tauri_specta::collect_events![
        Reembedding,
        Speaking,
        Recovered,
        DictationState,
        DictationHeard,
        DictationLevel,
        MicrophoneLevel
    ]
}

/// Sends events to the window.
pub trait Emit: Send + Sync + 'static {
    fn emit(&self, event: Event);
}

impl<R: Runtime> Emit for AppHandle<R> {
    fn emit(&self, event: Event) {
        fn send<R: Runtime, E: Named + Serialize + Clone>(
            app: &AppHandle<R>,
            e: E,
        ) -> tauri::Result<()> {
            Emitter::emit(app, E::NAME, e)
        }
        let sent = match event {
            Event::Reembedding(e) => send(self, e),
            Event::Speaking(e) => send(self, e),
            Event::Recovered(e) => send(self, e),
            Event::DictationState(e) => send(self, e),
            Event::DictationHeard(e) => send(self, e),
            Event::DictationLevel(e) => send(self, e),
            Event::MicrophoneLevel(e) => send(self, e),
        };
        if let Err(e) = sent {
            tracing::warn!("an event did not reach the window: {e}");
        }
    }
}

/// The window's end of the events, bound to the app's handle once the app is built (the state
/// is made before there is a handle). Events sent before that are dropped.
#[derive(Default)]
pub struct Relay(std::sync::OnceLock<Box<dyn Emit>>);

impl Relay {
    /// Send every event to `to` from now on (only the first binding counts).
    pub fn bind(&self, to: impl Emit) {
        let _bound_already = self.0.set(Box::new(to));
    }
}

impl Emit for Relay {
    fn emit(&self, event: Event) {
        if let Some(to) = self.0.get() {
            to.emit(event);
        }
    }
}
