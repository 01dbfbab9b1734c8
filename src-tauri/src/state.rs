//! What the app holds while it runs: the store, the managers that own the microphone, the speaker
//! and the models, the settings and where recordings go. No logic beyond holding; the engine and
//! the managers do the work.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use umwelt::bench::Runs;
use umwelt::settings::{Settings, SettingsFile};
use umwelt::speech::Dictation;
use umwelt::voice::Speaker;
use umwelt::Store;

use crate::events::Relay;
use crate::managers::bench::BenchState;
use crate::managers::microphone::{Microphone, MicrophoneOwner, SystemMicrophones};
use crate::managers::models::SpeechModels;
use crate::managers::speaker::SpeakerOwner;
use crate::shortcut::Shortcut;

pub struct AppState {
    pub store: Arc<Store>,
    /// The holder whose notebook the window shows.
    pub scope: String,
    /// Recordings and the drafts they become.
    pub dictation: Arc<Dictation>,
    pub speech_models: SpeechModels,
    /// The microphone's one owner.
    pub microphone: Arc<Microphone>,
    /// The speaker's one owner.
    pub speaker: Arc<SpeakerOwner>,
    /// The app's own performance database: kept benchmark runs and real timings.
    pub runs: Arc<Runs>,
    pub bench: BenchState,
    pub settings_file: Arc<SettingsFile>,
    pub settings: Arc<Mutex<Settings>>,
    /// Said once to the user at start-up (a damaged settings file that was reset); taken by the
    /// window when it first asks.
    pub startup_note: Mutex<Option<String>>,
    /// Where the managers send events; bound to the window once the app is built.
    pub events: Arc<Relay>,
    /// The global shortcut; bound to its plugin once the app runs.
    pub shortcut: Shortcut,
}

impl AppState {
    /// Open the user's memory file under `data_dir` (created if need be). Loads no model.
    pub fn open(data_dir: PathBuf) -> umwelt::Result<AppState> {
        let store = Arc::new(Store::open(data_dir.join("memories.sqlite"))?);
        let settings_file = SettingsFile::new(data_dir.join("settings.json"));
        let (settings, startup_note) = settings_file.load();
        let speech_models = SpeechModels::new(settings.speech_model);
        let settings = Arc::new(Mutex::new(settings));
        let dictation = Arc::new(Dictation::new(data_dir.join("recordings")));
        let runs = Arc::new(Runs::open(&data_dir.join("perf.sqlite"))?);
        let events = Arc::new(Relay::default());
        let microphone = MicrophoneOwner::new(
            SystemMicrophones {
                dictation: dictation.clone(),
                transcriber: speech_models.transcriber.clone(),
                vad: speech_models.vad.clone(),
                settings: settings.clone(),
                runs: runs.clone(),
            },
            events.clone(),
        );
        Ok(AppState {
            store,
            scope: umwelt::store::DEFAULT_SCOPE.to_string(),
            dictation,
            speech_models,
            microphone,
            speaker: Arc::new(SpeakerOwner::new(Arc::new(Speaker::new()))),
            runs,
            bench: BenchState::default(),
            settings_file: Arc::new(settings_file),
            settings,
            startup_note: Mutex::new(startup_note),
            events,
            shortcut: Shortcut::default(),
        })
    }
}
