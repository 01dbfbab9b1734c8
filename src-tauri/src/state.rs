//! What the app holds while it runs: the store, the managers that own the microphone, the speaker
//! and the models, the settings and where recordings go. No logic beyond holding; the engine and
//! the managers do the work.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use umwelt::at_rest::{self, Ask};
use umwelt::damaged::open_or_set_aside;
use umwelt::keyring::SystemKeyring;
use umwelt::perf_db::Runs;
use umwelt::settings::{Encryption, Settings, SettingsFile};
use umwelt::speech::DictationDrafts;
use umwelt::store::cipher::Key;
use umwelt::voice::Speaker;
use umwelt::Store;

use crate::events::Relay;
use crate::managers::bench::BenchState;
use crate::managers::desktop::Desktop;
use crate::managers::forgetting::Forgetting;
use crate::managers::jobs::Jobs;
use crate::managers::microphone::{Microphone, MicrophoneOwner, SystemMicrophones};
use crate::managers::models::SpeechModels;
use crate::managers::speaker::SpeakerOwner;
use crate::managers::town::DemoTown;
use crate::shortcut::Shortcut;

pub struct AppState {
    pub store: Arc<Store>,
    /// How the memory file is kept on the disk this session (Settings → Privacy).
    pub privacy: Privacy,
    /// The holder whose notebook the window shows.
    pub scope: String,
    /// Recordings and the drafts they become.
    pub dictation: Arc<DictationDrafts>,
    pub speech_models: SpeechModels,
    /// The microphone's one owner.
    pub microphone: Arc<Microphone>,
    /// The focused app, the clipboard and notifications (After dictation).
    pub desktop: Arc<Desktop>,
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
    /// Where the log files are ([`crate::logging`]).
    pub log_dir: PathBuf,
    /// Deleted memories waiting out their Undo time.
    pub forgetting: Arc<Forgetting>,
    /// The one long job on the user's files, and its Cancel.
    pub jobs: Jobs,
    /// The demo town's file and its one connection.
    pub town: Arc<DemoTown>,
}

/// What opening the data folder came to.
pub enum Opening {
    Ready(Box<AppState>),
    /// The memory file needs a passphrase first (Settings → Privacy chose one, or the keyring
    /// cannot give the key): the window asks for it ([`crate::unlock`]).
    Ask(Ask),
}

/// How the memory file is kept on the disk this session, for Settings → Privacy.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct Privacy {
    /// What Settings → Privacy chose when Umwelt started (a new choice applies at the next).
    pub chosen: Encryption,
    /// Whether the memory file is encrypted now.
    pub encrypted: bool,
    /// Why it is not kept as chosen (the keyring could not be reached), shown until it is.
    pub warning: Option<String>,
}

impl AppState {
    /// Open the user's memory file under `data_dir` (created if need be), kept as Settings →
    /// Privacy chose (`umwelt::at_rest`): with the keyring's key, with `passphrase`, or plain.
    /// Loads no model. A memory file or performance database that cannot be opened is set
    /// aside (kept, never deleted), a fresh one is started, and the start-up note says where the
    /// old one is; an encrypted file is never set aside: without its key, the window asks.
    pub fn open(data_dir: PathBuf, passphrase: Option<&Key>) -> umwelt::Result<Opening> {
        let mut notes = Vec::new();
        // Other users of the machine must not read what Umwelt keeps; an older Umwelt made
        // its files with the umask's modes, so they are repaired at every start.
        match umwelt::paths::secure_data_dir(&data_dir) {
            Ok(0) => {}
            Ok(n) => tracing::info!("made {n} files and folders in the data folder private"),
            Err(e) => tracing::warn!("the data folder could not be made private: {e}"),
        }
        let settings_file = SettingsFile::new(data_dir.join("settings.json"));
        let (settings, settings_note) = settings_file.load();
        let memory_file = data_dir.join("memories.sqlite");
        let keyring = SystemKeyring::for_file(&memory_file);
        let embedder = Arc::new(umwelt::embed::LazyEmbedder::new());
        let (opening, kept) = open_or_set_aside(&memory_file, |p| {
            at_rest::open(
                p,
                embedder.clone(),
                settings.encryption,
                &keyring,
                passphrase,
            )
        })?;
        let opened = match opening {
            at_rest::Opening::Open(o) => *o,
            at_rest::Opening::Ask(ask) => return Ok(Opening::Ask(ask)),
        };
        if let Some(kept) = kept {
            notes.push(format!(
                "Your memory file could not be opened: it is damaged. It is kept, untouched, as {}, and Umwelt started a fresh one, so you can go on. To go back to the old file, quit Umwelt and rename it to memories.sqlite; a file-recovery tool such as `sqlite3 .recover` may get its memories back.",
                kept.display()
            ));
        }
        notes.extend(opened.done);
        notes.extend(settings_note);
        let store = Arc::new(opened.store);
        let privacy = Privacy {
            chosen: settings.encryption,
            encrypted: store.is_encrypted(),
            warning: opened.warning,
        };
        let speech_models = SpeechModels::new(settings.speech_model);
        let settings = Arc::new(Mutex::new(settings));
        // An unsaved dictation is also a draft of the user's holder in the memory file.
        let dictation = Arc::new(
            DictationDrafts::new(data_dir.join("recordings"))
                .sealing_with(store.seal()?)
                .keeping_drafts_in(store.clone(), umwelt::store::DEFAULT_SCOPE),
        );
        let (runs, kept) = open_or_set_aside(&data_dir.join("perf.sqlite"), Runs::open)?;
        if let Some(kept) = kept {
            notes.push(format!(
                "The dashboard's history could not be read: it is damaged, and was set aside as {}. New runs are kept from now on; your memories are not affected.",
                kept.display()
            ));
        }
        let runs = Arc::new(runs);
        let startup_note = (!notes.is_empty()).then(|| notes.join("\n\n"));
        let events = Arc::new(Relay::default());
        let desktop = Arc::new(Desktop::default());
        let microphone = MicrophoneOwner::new(
            SystemMicrophones {
                dictation: dictation.clone(),
                transcriber: speech_models.transcriber.clone(),
                vad: speech_models.vad.clone(),
                settings: settings.clone(),
                runs: runs.clone(),
                store: store.clone(),
                scope: umwelt::store::DEFAULT_SCOPE.to_string(),
                desktop: desktop.clone(),
            },
            events.clone(),
        );
        Ok(Opening::Ready(Box::new(AppState {
            forgetting: Forgetting::new(store.clone()),
            jobs: Jobs::default(),
            town: Arc::new(DemoTown::new(&data_dir, store.embedder().clone())),
            store,
            privacy,
            scope: umwelt::store::DEFAULT_SCOPE.to_string(),
            dictation,
            speech_models,
            microphone,
            desktop,
            speaker: Arc::new(SpeakerOwner::new(Arc::new(Speaker::new()))),
            runs,
            bench: BenchState::default(),
            settings_file: Arc::new(settings_file),
            settings,
            startup_note: Mutex::new(startup_note),
            events,
            shortcut: Shortcut::default(),
            log_dir: crate::logging::log_dir(&data_dir),
        })))
    }
}
