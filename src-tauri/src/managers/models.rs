//! The speech models (whisper and the voice activity detector): which one is used, loading them
//! after start-up (when a global shortcut may ask for a dictation at any moment; otherwise when
//! the Record button is first focused), and unloading them when dictation has been idle. The embedding model
//! belongs to the store, the voice to [`super::speaker::SpeakerOwner`].

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use umwelt::embed::EMBED_MODEL_ID;
use umwelt::error::catch_panic;
use umwelt::settings::{Settings, SpeechModel};
use umwelt::speech::{Ears, LazyTranscriber, LazyVad, Transcriber};

use crate::events::{Emit, Event, Recovered, Reembedding};
use crate::state::AppState;

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

/// Whether whisper and the VAD load at start ([`warm_up`]) rather than when first wanted: with
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

/// On the `umwelt-warm-up` thread, so the first search, dictation or reply does not wait: load
/// the holder's vectors and the embedding model; re-embed the memories an older model made
/// (`reembed-progress`); turn recordings a crash left behind into drafts (`recovered`; whisper
/// and the VAD load for that only if a recording needs them); load whisper and the VAD if
/// [`ears_at_start`] says so; load the voice; give back what the loads freed
/// (`release_freed_memory`). Start-up never waits for any of it; a failure (or
/// a panic) in one step is logged and the next steps still run; the first real use reports it.
pub fn warm_up(state: &AppState) {
    let store = state.store.clone();
    let dictation = state.dictation.clone();
    let (transcriber, vad) = (
        state.speech_models.transcriber.clone(),
        state.speech_models.vad.clone(),
    );
    let scope = state.scope.clone();
    let (decoding, voice, ears_now) = {
        let s = state.settings.lock().unwrap_or_else(|p| p.into_inner());
        (s.decoding(), s.voice.clone(), ears_at_start(&s))
    };
    let speaker = state.speaker.speaker.clone();
    let events: Arc<dyn Emit> = state.events.clone();
    let spawned = std::thread::Builder::new()
        .name("umwelt-warm-up".into())
        .spawn(move || {
            // Each step on its own: a panic in one (a bug) is logged, and the next still runs, so
            // recordings a crash left are recovered whatever happened before.
            let step = |what: &str, f: &mut dyn FnMut() -> umwelt::Result<()>| {
                if let Err(e) = catch_panic(what, f) {
                    tracing::warn!("warm-up: {e}");
                }
            };
            step("loading the memories' vectors", &mut || {
                store.preload(&scope)
            });
            step("re-embedding the memories", &mut || {
                let embedder = store.embedder().get()?;
                if store.stale_embeddings(EMBED_MODEL_ID)? == 0 {
                    return Ok(());
                }
                let embed = |texts: &[&str]| embedder.embed(texts);
                let mut progress = |p| events.emit(Event::Reembedding(Reembedding(p)));
                store
                    .reembed_all(
                        EMBED_MODEL_ID,
                        64,
                        &embed,
                        &mut progress,
                        &AtomicBool::new(false),
                    )
                    .map(|_| ())
            });
            step("recovering recordings a crash left", &mut || {
                // Whisper loads only if a recording needs transcribing: at most starts none
                // does, and the first dictation loads it (prefetched when the Record button
                // is first focused or pointed at).
                let ears = || {
                    Ok(Ears {
                        vad: vad.get()?,
                        transcriber: transcriber.get()?,
                        decoding: decoding.clone(),
                    })
                };
                let r = dictation.recover(&ears, &store);
                if !r.recovered.is_empty() || !r.problems.is_empty() {
                    events.emit(Event::Recovered(Recovered(r)));
                }
                Ok(())
            });
            if ears_now {
                step("loading whisper for the shortcut", &mut || {
                    vad.get()?;
                    transcriber.get().map(drop)
                });
            }
            step("loading the voice", &mut || {
                speaker.warm_up(&voice).map(|_| ())
            });
            umwelt::optimisations::release_freed_memory();
        });
    if let Err(e) = spawned {
        tracing::warn!("the warm-up did not start ({e}); models load on first use");
    }
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
