//! What the app holds while it runs: the store, the lazily loaded transcriber, the recording in
//! progress and where recordings go. No logic beyond holding; the engine does the work.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use std::sync::atomic::AtomicBool;

use umwelt::bench::Runs;
use umwelt::embed::EMBED_MODEL_ID;
use umwelt::settings::{Settings, SettingsFile};
use umwelt::speech::{Dictation, LazyTranscriber, LazyVad, LiveDictation, Recovery, Transcriber};
use umwelt::store::ReembedProgress;
use umwelt::voice::{Speaker, Stopper};
use umwelt::Store;

use crate::perf::BenchState;

pub struct AppState {
    pub store: Arc<Store>,
    pub transcriber: Arc<LazyTranscriber>,
    pub dictation: Arc<Dictation>,
    /// The voice activity detector (Silero), loaded with the transcriber.
    pub vad: Arc<LazyVad>,
    /// The dictation being recorded, if one is.
    pub dictating: Mutex<Option<LiveDictation>>,
    /// Stops the level meter of the dictation being recorded.
    pub meter_stop: Mutex<Option<Arc<AtomicBool>>>,
    /// Set to end Settings' microphone check (`crate::mic_check`).
    pub mic_check: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>>,
    /// The holder whose notebook the window shows.
    pub scope: String,
    /// The app's own performance database: kept benchmark runs and real timings.
    pub runs: Arc<Runs>,
    pub bench: BenchState,
    /// The voice (Kokoro), loaded on first use or by the warm-up.
    pub speaker: Arc<Speaker>,
    /// Stops the reply being spoken, if one is.
    pub speaking: Mutex<Option<Stopper>>,
    pub settings_file: Arc<SettingsFile>,
    pub settings: Arc<Mutex<Settings>>,
    /// Said once to the user at start-up (a damaged settings file that was reset).
    pub startup_note: Option<String>,
}

impl AppState {
    /// Open the user's memory file under `data_dir` (created if need be). Loads no model.
    pub fn open(data_dir: PathBuf) -> umwelt::Result<AppState> {
        let store = Store::open(data_dir.join("memories.sqlite"))?;
        let settings_file = SettingsFile::new(data_dir.join("settings.json"));
        let (settings, startup_note) = settings_file.load();
        let model = settings.speech_model;
        Ok(AppState {
            store: Arc::new(store),
            transcriber: Arc::new(LazyTranscriber::with(move || {
                Transcriber::load_model(model.file())
            })),
            dictation: Arc::new(Dictation::new(data_dir.join("recordings"))),
            vad: Arc::new(LazyVad::new()),
            dictating: Mutex::new(None),
            meter_stop: Mutex::new(None),
            mic_check: Mutex::new(None),
            scope: umwelt::store::DEFAULT_SCOPE.to_string(),
            runs: Arc::new(Runs::open(&data_dir.join("perf.sqlite"))?),
            bench: BenchState::default(),
            speaker: Arc::new(Speaker::new()),
            speaking: Mutex::new(None),
            settings_file: Arc::new(settings_file),
            settings: Arc::new(Mutex::new(settings)),
            startup_note,
        })
    }

    /// Load the models on a background thread, so the first recording or search does not wait
    /// for them, then re-embed any memory whose vector an older model made (reporting progress).
    /// Start-up never waits for any of it; failures are left for the first real use to report.
    /// Then any recording a crash left behind is transcribed into a draft (`on_recovered`).
    pub fn warm_up(
        &self,
        on_reembed: impl FnMut(ReembedProgress) + Send + 'static,
        on_recovered: impl FnOnce(Recovery) + Send + 'static,
    ) {
        let store = self.store.clone();
        let dictation = self.dictation.clone();
        let transcriber = self.transcriber.clone();
        let vad = self.vad.clone();
        let scope = self.scope.clone();
        let decoding = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .decoding();
        let speaker = self.speaker.clone();
        let voice = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .voice
            .clone();
        let mut on_reembed = on_reembed;
        std::thread::Builder::new()
            .name("umwelt-warm-up".into())
            .spawn(move || {
                let _ = store.preload(&scope);
                let Ok(embedder) = store.embedder().get() else {
                    return;
                };
                if store.stale_embeddings(EMBED_MODEL_ID).unwrap_or(0) > 0 {
                    let embed = |texts: &[&str]| embedder.embed(texts);
                    if let Err(e) = store.reembed_all(
                        EMBED_MODEL_ID,
                        64,
                        &embed,
                        &mut on_reembed,
                        &AtomicBool::new(false),
                    ) {
                        eprintln!("umwelt: re-embedding stopped: {e}");
                    }
                }
                if let (Ok(transcriber), Ok(vad)) = (transcriber.get(), vad.get()) {
                    let ears = umwelt::speech::Ears {
                        vad,
                        transcriber,
                        decoding,
                    };
                    let r = dictation.recover(&ears);
                    if !r.recovered.is_empty() || !r.problems.is_empty() {
                        on_recovered(r);
                    }
                }
                let _ = speaker.warm_up(&voice);
            })
            .ok();
    }
}

impl AppState {
    /// The microphone to open: `device` if named, else the one chosen in Settings (`None`: the
    /// system default).
    pub fn microphone(&self, device: Option<String>) -> Option<String> {
        device.or_else(|| {
            self.settings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .microphone
                .clone()
        })
    }

    /// Use the speech model the settings name from the next dictation on.
    pub fn use_speech_model(&self, model: umwelt::settings::SpeechModel) {
        self.transcriber
            .replace_loader(move || Transcriber::load_model(model.file()));
    }

    /// Unload the speech model (and the voice activity detector) after the idle time the
    /// settings give, checked every 30 s on the `umwelt-idle` thread; the next dictation loads
    /// them again. (A dictation being recorded holds its own handle on them.)
    pub fn unload_when_idle(&self) {
        let (transcriber, vad, settings) = (
            self.transcriber.clone(),
            self.vad.clone(),
            self.settings.clone(),
        );
        std::thread::Builder::new()
            .name("umwelt-idle".into())
            .spawn(move || loop {
                std::thread::sleep(std::time::Duration::from_secs(30));
                let minutes = settings.lock().map(|s| s.unload_after_minutes).unwrap_or(0);
                if minutes > 0 {
                    let idle = std::time::Duration::from_secs(minutes as u64 * 60);
                    if transcriber.unload_if_idle(idle) {
                        vad.unload();
                    }
                }
            })
            .ok();
    }
}
