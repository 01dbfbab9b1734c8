//! The work done after start-up, so the first search, dictation or reply does not wait
//! ([`warm_up`]). It reads the whole [`AppState`], so it lives above the managers it drives.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use umwelt::embed::EMBED_MODEL_ID;
use umwelt::error::catch_panic;
use umwelt::speech::Ears;

use crate::events::{Emit, Event, Recovered, Reembedding};
use crate::managers::models::ears_at_start;
use crate::state::AppState;

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
                let ears = || Ears::from_loaded(&vad, &transcriber, decoding.clone());
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
