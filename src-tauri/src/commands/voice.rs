//! Reading aloud, and the settings (voice, speed, speaker; microphone, speech model, vocabulary,
//! shortcut).

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Runtime, State};
use umwelt::settings::Settings;
use umwelt::store::journal::{Stage, Turn};
use umwelt::clock::now_ms;
use umwelt::voice::{self, Output, SpeechReport, VoiceInfo};

use super::blocking;
use crate::error::CmdResult;
use crate::events;
use crate::state::AppState;

/// The turn-log session spoken replies are written to.
pub const VOICE_SESSION: &str = "voice";

/// Payload of the `speaking` event.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct SpeakingState {
    pub speaking: bool,
    /// What is being read (the first 80 characters).
    pub text: String,
    /// Set when the reply has ended: what it took.
    pub report: Option<SpeechReport>,
    /// Set when it failed: what happened and what to do.
    pub error: Option<String>,
}

/// The voices the app ships.
#[tauri::command]
pub fn list_voices() -> Vec<VoiceInfo> {
    voice::voices()
}

/// The output devices the system offers.
#[tauri::command]
pub async fn list_speakers() -> CmdResult<Vec<String>> {
    blocking(voice::output_devices).await
}

#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> Settings {
    state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Validate, save and use new settings: a new speech model is loaded at the next dictation, a
/// new shortcut is registered at once (one another program holds is an error to show).
#[tauri::command]
pub async fn save_settings<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    settings: Settings,
) -> CmdResult<Settings> {
    let (file, current) = (state.settings_file.clone(), state.settings.clone());
    let before = current.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let saved = blocking(move || {
        file.save(&settings)?;
        *current.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
        Ok(settings)
    })
    .await?;
    if saved.speech_model != before.speech_model {
        state.use_speech_model(saved.speech_model);
    }
    if saved.shortcut != before.shortcut {
        crate::shortcut::apply(&app, &saved)
            .map_err(|e| crate::error::CommandError::new("input", e))?;
    }
    Ok(saved)
}

/// Read `text` aloud with the chosen voice on the chosen speaker. Any reply already being spoken
/// stops first. Resolves when the reply has been spoken (or stopped) with what it took; the
/// timing goes to the turn log and the dashboard's real timings.
#[tauri::command]
pub async fn speak<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    text: String,
) -> CmdResult<SpeechReport> {
    stop_speaking(state.clone());
    let settings = state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let speech = state.speaker.speak(
        &text,
        &settings.speak_options(),
        Output::Device(settings.speaker.clone()),
    )?;
    *state.speaking.lock().unwrap_or_else(|p| p.into_inner()) = Some(speech.stopper());
    let short: String = text.chars().take(80).collect();
    let _ = app.emit(
        events::SPEAKING,
        SpeakingState {
            speaking: true,
            text: short.clone(),
            report: None,
            error: None,
        },
    );
    let (store, runs, scope) = (state.store.clone(), state.runs.clone(), state.scope.clone());
    let result = blocking(move || {
        let r = speech.wait()?;
        if let Some(ms) = r.first_audio_ms {
            let _ = runs.record("speak", now_ms(), ms);
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
        let _ = store.log_turn(&scope, VOICE_SESSION, turn);
        Ok(r)
    })
    .await;
    let payload = match &result {
        Ok(r) => SpeakingState {
            speaking: false,
            text: short,
            report: Some(r.clone()),
            error: None,
        },
        Err(e) => SpeakingState {
            speaking: false,
            text: short,
            report: None,
            error: Some(e.message.clone()),
        },
    };
    let _ = app.emit(events::SPEAKING, payload);
    result
}

/// Stop the reply being spoken (nothing happens when none is).
#[tauri::command]
pub fn stop_speaking(state: State<'_, AppState>) {
    if let Some(s) = state
        .speaking
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        s.stop();
    }
}
