//! Reading aloud: the voices, the speakers, speak and stop. The speaker's owner
//! (`crate::managers::speaker`) and the engine do the work.

use tauri::State;
use umwelt::clock::now_ms;
use umwelt::perf_db::TimingKind;
use umwelt::store::journal::{Stage, Turn};
use umwelt::voice::{self, Output, SpeechReport, VoiceInfo};
use umwelt::MemoryId;

use super::blocking;
use crate::error::CmdResult;
use crate::events::{Emit, Event, Speaking};
use crate::state::AppState;

/// The turn-log session spoken replies are written to.
pub const VOICE_SESSION: &str = "voice";

/// The voices the app ships.
#[tauri::command]
#[specta::specta]
pub fn list_voices() -> Vec<VoiceInfo> {
    voice::voices()
}

/// The output devices the system offers.
#[tauri::command]
#[specta::specta]
pub async fn list_speakers() -> CmdResult<Vec<String>> {
    blocking(voice::output_devices).await
}

/// Read `text` aloud with the chosen voice on the chosen speaker. Any reply already being spoken
/// stops first. Resolves when the reply has been spoken (or stopped) with what it took; the
/// timing goes to the turn log and the dashboard's real timings.
#[tauri::command]
#[specta::specta]
pub async fn speak(state: State<'_, AppState>, text: String) -> CmdResult<SpeechReport> {
    let settings = state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let short: String = text.chars().take(80).collect();
    let (store, runs, scope, events) = (
        state.store.clone(),
        state.runs.clone(),
        state.scope.clone(),
        state.events.clone(),
    );
    let (speaker, started) = (state.speaker.clone(), (events.clone(), short.clone()));
    let result = blocking(move || {
        // Loading the voice is slow the first time: on the blocking pool, like the wait.
        let speech = speaker.speak(
            &text,
            &settings.speak_options(),
            Output::Device(settings.speaker.clone()),
        )?;
        let (events, short) = started;
        events.emit(Event::Speaking(Speaking {
            speaking: true,
            text: short,
            report: None,
            error: None,
        }));
        let r = speech.wait()?;
        if let Some(ms) = r.first_audio_ms {
            if let Err(e) = runs.record(TimingKind::Speak, now_ms(), ms) {
                tracing::warn!("the reply's time was not recorded: {e}");
            }
        }
        let stages = [
            ("first_audio", r.first_audio_ms.unwrap_or(0.0)),
            ("synthesis", r.synth_ms),
            ("spoken", r.total_ms),
        ];
        let turn = Turn {
            user_text: String::new(),
            reply_text: text,
            stages: stages
                .iter()
                .map(|(s, ms)| Stage {
                    stage: s.to_string(),
                    ms: *ms,
                })
                .collect(),
            at: now_ms(),
        };
        if let Err(e) = store.log_turn(&scope, VOICE_SESSION, turn) {
            tracing::warn!("the reply's turn was not logged: {e}");
        }
        Ok(r)
    })
    .await;
    let (report, error) = match &result {
        Ok(r) => (Some(r.clone()), None),
        Err(e) => (None, Some(e.message.clone())),
    };
    events.emit(Event::Speaking(Speaking {
        speaking: false,
        text: short,
        report,
        error,
    }));
    result
}

/// Play a memory's original recording on the chosen speaker (what is playing stops first).
/// Resolves when it has played or been stopped.
#[tauri::command]
#[specta::specta]
pub async fn play_recording(state: State<'_, AppState>, id: MemoryId) -> CmdResult<()> {
    let device = state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .speaker
        .clone();
    let (store, speaker, events) = (
        state.store.clone(),
        state.speaker.clone(),
        state.events.clone(),
    );
    let announce = events.clone();
    let result = blocking(move || {
        let memory = store.get(id)?;
        let path = memory.audio_path.ok_or_else(|| {
            umwelt::Error::NotFound(format!(
                "a recording of memory {id} (it was typed or imported)"
            ))
        })?;
        if !std::path::Path::new(&path).exists() {
            return Err(umwelt::Error::NotFound(format!(
                "the recording {path} (moved or deleted outside Umwelt)"
            )));
        }
        // Only a plain file in Umwelt's recordings folder is opened (an imported note may
        // name any path; a FIFO would hang the player).
        let file = store.recording_file(&path)?;
        let playing =
            speaker.play_recording(&file, store.seal()?.as_ref(), Output::Device(device))?;
        announce.emit(Event::Speaking(Speaking {
            speaking: true,
            text: "the recording".into(),
            report: None,
            error: None,
        }));
        playing.wait().map(|_| ())
    })
    .await;
    events.emit(Event::Speaking(Speaking {
        speaking: false,
        text: "the recording".into(),
        report: None,
        error: result.as_ref().err().map(|e| e.message.clone()),
    }));
    result
}

/// Stop the reply being spoken (nothing happens when none is).
#[tauri::command]
#[specta::specta]
pub fn stop_speaking(state: State<'_, AppState>) {
    state.speaker.stop();
}
