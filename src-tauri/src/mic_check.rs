//! Settings' microphone check: the chosen microphone opened only to show its level, ten times a
//! second as `microphone-level` events, for at most [`CHECK_FOR`] or until stopped. Nothing is
//! recorded. A dictation stops the check first (some systems open a device only once).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Manager, Runtime};
use umwelt::speech::Monitor;

use crate::error::{CmdResult, CommandError};
use crate::events;
use crate::state::AppState;

/// A check ends by itself after this long.
pub const CHECK_FOR: Duration = Duration::from_secs(30);

/// Payload of the `microphone-level` event.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
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

/// Open `device` (or the one chosen in Settings, or the default) and report its level.
pub fn start<R: Runtime>(app: &AppHandle<R>, device: Option<String>) -> CmdResult<String> {
    if crate::dictating::is_listening(app) {
        return Err(CommandError::new(
            "busy",
            "a dictation is being recorded: the microphone is in use",
        ));
    }
    stop(app);
    let state = app.state::<AppState>();
    let device = state.microphone(device);
    let monitor = Monitor::open(device.as_deref())?;
    let name = monitor.device().to_string();
    let stopped = Arc::new(AtomicBool::new(false));
    let flag = stopped.clone();
    let device = name.clone();
    let app = app.clone();
    let thread = std::thread::Builder::new()
        .name("umwelt-mic-check".into())
        .spawn(move || {
            let t0 = Instant::now();
            let problem = loop {
                if stopped.load(Ordering::Relaxed) {
                    break None;
                }
                if let Some(lost) = monitor.lost() {
                    break Some(lost);
                }
                if t0.elapsed() >= CHECK_FOR {
                    break None;
                }
                let level = MicrophoneLevel {
                    device: device.clone(),
                    peak: monitor.level(),
                    done: false,
                    problem: None,
                };
                let _ = app.emit(events::MICROPHONE_LEVEL, level);
                std::thread::sleep(Duration::from_millis(100));
            };
            drop(monitor);
            let _ = app.emit(
                events::MICROPHONE_LEVEL,
                MicrophoneLevel {
                    device,
                    peak: 0.0,
                    done: true,
                    problem,
                },
            );
        })
        .map_err(|e| CommandError::new("internal", e.to_string()))?;
    *state.mic_check.lock().unwrap_or_else(|p| p.into_inner()) = Some((flag, thread));
    Ok(name)
}

/// End the check, if one is running, and wait until the device is closed.
pub fn stop<R: Runtime>(app: &AppHandle<R>) {
    let check = app
        .state::<AppState>()
        .mic_check
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some((flag, thread)) = check {
        flag.store(true, Ordering::Relaxed);
        let _ = thread.join();
    }
}
