//! The speech models (whisper and the voice activity detector): which one is used, loading them
//! after start-up (when a global shortcut may ask for a dictation at any moment; otherwise when
//! the Record button is first focused), and unloading them when dictation has been idle. The embedding model
//! belongs to the store, the voice to [`super::speaker::SpeakerOwner`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use umwelt::settings::{Settings, SpeechModel};
use umwelt::speech::{LazyTranscriber, LazyVad, Transcriber};

/// How often the idle time is checked.
const IDLE_CHECK_EVERY: Duration = Duration::from_secs(30);

/// Whisper and the voice activity detector (Silero), each loaded on first use.
pub struct SpeechModels {
    pub transcriber: Arc<LazyTranscriber>,
    pub vad: Arc<LazyVad>,
}

impl SpeechModels {
    /// The models for `model`; nothing is loaded yet.
    pub fn new(model: SpeechModel) -> SpeechModels {
        SpeechModels {
            transcriber: Arc::new(LazyTranscriber::with(move || {
                Transcriber::load_model(model.file())
            })),
            vad: Arc::new(LazyVad::new()),
        }
    }

    /// Use `model` from the next dictation on.
    pub fn use_model(&self, model: SpeechModel) {
        self.transcriber
            .replace_loader(move || Transcriber::load_model(model.file()));
    }

    /// Unload whisper (and the voice activity detector) after the idle time the settings give,
    /// checked every 30 s on the `umwelt-idle` thread; the next dictation loads them again. (A
    /// dictation being recorded holds its own handle on them.)
    pub fn unload_when_idle(&self, settings: Arc<Mutex<Settings>>) {
        let (transcriber, vad) = (self.transcriber.clone(), self.vad.clone());
        let spawned = std::thread::Builder::new()
            .name("umwelt-idle".into())
            .spawn(move || loop {
                std::thread::sleep(IDLE_CHECK_EVERY);
                let minutes = settings.lock().map(|s| s.unload_after_minutes).unwrap_or(0);
                if minutes > 0 {
                    let idle = Duration::from_secs(minutes as u64 * 60);
                    if transcriber.unload_if_idle(idle) {
                        vad.unload();
                        umwelt::optimisations::release_freed_memory();
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("the idle unloader did not start ({e}); models stay loaded");
        }
    }
}

/// Whether whisper and the VAD load at start ([`crate::warm_up`]) rather than when first wanted: with
/// a global dictation shortcut, a press must start listening at once, from anywhere; without
/// one, a dictation starts at the Record button, which loads them when first focused or pointed
/// at (`prefetch_dictation`; loading takes about 0.2 s, `load_ears` in the harness), and their
/// memory (up to ~115 MiB) stays free until the user dictates. (The embedding model and the
/// voice always load at start: the embedder holds ~35 MiB and loads in 25 ms, which would
/// still land on the first search, and the voice's 0.5-1.1 s on the first reply read aloud,
/// whose target for the first sound is 0.5 s; docs/PERFORMANCE.md.)
pub fn ears_at_start(settings: &Settings) -> bool {
    !settings.shortcut.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whisper_loads_at_start_only_for_a_shortcut() {
        let mut s = Settings::default();
        assert!(ears_at_start(&s), "the default shortcut must start at once");
        s.shortcut = " ".into();
        assert!(!ears_at_start(&s));
        s.shortcut.clear();
        assert!(!ears_at_start(&s));
    }
}
