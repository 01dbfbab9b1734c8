//! Dictation in the app: one live dictation at a time, started and stopped by the Record button
//! or the global shortcut, reporting what it hears and its state to the window as events. The
//! engine does the work ([`umwelt::speech::Dictation`]); this file wires it to events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use umwelt::speech::{Draft, Ears, Heard};
use umwelt::clock::now_ms;

use crate::error::{CmdResult, CommandError};
use crate::events;
use crate::state::AppState;

/// Where a dictation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
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

/// Payload of the `dictation-state` event.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct DictationState {
    pub phase: Phase,
    /// The microphone in use (while listening).
    pub device: Option<String>,
    pub draft: Option<Draft>,
    pub message: Option<String>,
}

/// Payload of the `dictation-level` event, ten times a second while recording.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct Level {
    /// Peak of the latest block, 0..1.
    pub peak: f32,
    pub seconds: f32,
}

impl DictationState {
    fn new(phase: Phase) -> DictationState {
        DictationState {
            phase,
            device: None,
            draft: None,
            message: None,
        }
    }

    fn failed(message: String) -> DictationState {
        DictationState {
            message: Some(message),
            ..DictationState::new(Phase::Failed)
        }
    }
}

fn emit_state<R: Runtime>(app: &AppHandle<R>, state: DictationState) {
    let _ = app.emit(events::DICTATION_STATE, state);
}

/// Whether a dictation is being recorded.
pub fn is_listening<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.state::<AppState>()
        .dictating
        .lock()
        .map(|d| d.is_some())
        .unwrap_or(false)
}

/// The models and decoding dictation uses now (loading them if the idle timer unloaded them).
pub fn ears(state: &AppState) -> umwelt::Result<Ears> {
    let decoding = state
        .settings
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .decoding();
    Ok(Ears {
        vad: state.vad.get()?,
        transcriber: state.transcriber.get()?,
        decoding,
    })
}

/// Start a dictation from the chosen microphone (or `device`). Blocks while models load.
pub fn start<R: Runtime>(app: &AppHandle<R>, device: Option<String>) -> CmdResult<()> {
    let state = app.state::<AppState>();
    let mut slot = state.dictating.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return Err(CommandError::new(
            "busy",
            "a dictation is already being recorded: press Stop first",
        ));
    }
    let device = state.microphone(device);
    // Settings' microphone check lets go of the device.
    crate::mic_check::stop(app);
    let ears = ears(&state)?;
    let heard_app = app.clone();
    let live = state
        .dictation
        .start(device.as_deref(), &ears, move |h: &Heard| {
            let _ = heard_app.emit(events::DICTATION_HEARD, h.clone());
        })?;
    let device = live.device().to_string();
    // The level meter, ten times a second until the dictation ends; it also notices a
    // microphone that stopped (unplugged) and stops the dictation, keeping what was captured.
    let stop_meter = Arc::new(AtomicBool::new(false));
    *state.meter_stop.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop_meter.clone());
    let meter_app = app.clone();
    let _ = std::thread::Builder::new()
        .name("umwelt-meter".into())
        .spawn(move || {
            while !stop_meter.load(Ordering::Relaxed) {
                let reading = {
                    let st = meter_app.state::<AppState>();
                    let d = st.dictating.lock().unwrap_or_else(|p| p.into_inner());
                    d.as_ref().map(|l| {
                        let level = Level {
                            peak: l.level(),
                            seconds: l.seconds(),
                        };
                        (level, l.lost())
                    })
                };
                match reading {
                    Some((_, Some(lost))) => {
                        let _ = finish(&meter_app, Some(lost));
                        break;
                    }
                    Some((level, None)) => {
                        let _ = meter_app.emit(events::DICTATION_LEVEL, level);
                    }
                    None => break,
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
    *slot = Some(live);
    drop(slot);
    emit_state(
        app,
        DictationState {
            device: Some(device),
            ..DictationState::new(Phase::Listening)
        },
    );
    Ok(())
}

/// Stop the dictation: the last words are transcribed and a draft is made (and announced).
pub fn stop<R: Runtime>(app: &AppHandle<R>) -> CmdResult<Draft> {
    finish(app, None)
}

/// Stop, with `why` it stopped when the user did not press Stop (the microphone was lost): the
/// draft's announcement carries it.
fn finish<R: Runtime>(app: &AppHandle<R>, why: Option<String>) -> CmdResult<Draft> {
    let state = app.state::<AppState>();
    let live = state
        .dictating
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(|| {
            CommandError::new("input", "nothing is being recorded: press Record first")
        })?;
    if let Some(m) = state
        .meter_stop
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        m.store(true, Ordering::Relaxed);
    }
    emit_state(app, DictationState::new(Phase::Transcribing));
    let t = Instant::now();
    match state.dictation.stop(live) {
        Ok(draft) => {
            let _ = state
                .runs
                .record("dictation", now_ms(), t.elapsed().as_secs_f64() * 1e3);
            let message = match (why, &draft.problem) {
                (Some(why), Some(problem)) => Some(format!("{why} {problem}")),
                (Some(why), None) => Some(format!("{why} What was recorded is kept below.")),
                (None, problem) => problem.clone(),
            };
            emit_state(
                app,
                DictationState {
                    draft: Some(draft.clone()),
                    message,
                    ..DictationState::new(Phase::Ready)
                },
            );
            Ok(draft)
        }
        Err(e) => {
            let message = match why {
                Some(why) => format!("{why} {e}"),
                None => e.to_string(),
            };
            emit_state(app, DictationState::failed(message));
            Err(e.into())
        }
    }
}

/// The shortcut or the button: start if idle, stop if listening (stopping runs on a thread of
/// its own; its result arrives as a `dictation-state` event).
pub fn toggle<R: Runtime>(app: &AppHandle<R>) {
    if is_listening(app) {
        stop_in_background(app);
    } else if let Err(e) = start(app, None) {
        emit_state(app, DictationState::failed(e.message));
    }
}

/// Stop without waiting (the shortcut's handler must not block).
pub fn stop_in_background<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let _ = stop(&app);
    });
}
