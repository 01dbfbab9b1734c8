//! The microphone's one owner. One state under one lock says who uses the microphone: nobody,
//! Settings' level check, or a dictation (with its level meter). Every start and stop is one
//! transition of that state, made while the device is opened or closed, so two users never hold
//! the microphone at once: a dictation ends a running check first; a check is refused while a
//! dictation records.
//!
//! What it opens is behind [`Microphones`]: the system's devices and the engine's
//! [`DictationDrafts`] in the app ([`SystemMicrophones`]), a counted stand-in in the race test below.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use umwelt::clock::now_ms;
use umwelt::perf_db::{Runs, TimingKind};
use umwelt::settings::Settings;
use umwelt::speech::{
    AfterStop, ClosedDictation, DictationDrafts, Draft, Ears, Heard, LazyTranscriber, LazyVad,
    LiveDictation, Monitor,
};
use umwelt::Store;

use super::desktop::Desktop;

use crate::error::{CmdResult, CommandError, ErrorKind};
use crate::events::{
    DictationHeard, DictationLevel, DictationPhase, DictationState, Emit, Event, MicrophoneLevel,
};

/// A level check ends by itself after this long.
pub const CHECK_FOR: Duration = Duration::from_secs(30);
/// How often the level is sent while checking or dictating.
const LEVEL_EVERY: Duration = Duration::from_millis(100);

/// An open microphone, as the owner reads it.
pub trait OpenMicrophone: Send + 'static {
    /// The device's name.
    fn device(&self) -> &str;
    /// Peak of the latest block, 0..1.
    fn level(&self) -> f32;
    /// Why the device stopped sending sound (unplugged), if it did.
    fn lost(&self) -> Option<String>;
}

/// What the owner opens, and how a dictation ends.
pub trait Microphones: Send + Sync + 'static {
    /// A device opened only for its level.
    type Check: OpenMicrophone;
    /// A dictation being recorded.
    type Live: OpenMicrophone;
    /// A dictation whose device is closed, its last words still being transcribed.
    type Closed: Send;
    /// What a dictation needs before it opens the device (the models, loaded if need be).
    type Ready;

    /// The device to open: `device` if named, else the one chosen in Settings (`None`: the
    /// system default).
    fn choose(&self, device: Option<String>) -> Option<String>;
    fn open_check(&self, device: Option<&str>) -> umwelt::Result<Self::Check>;
    /// Slow (models load): called before the owner's lock is taken.
    fn ready(&self) -> umwelt::Result<Self::Ready>;
    fn start(
        &self,
        device: Option<&str>,
        ready: Self::Ready,
        on_heard: Box<dyn FnMut(&Heard) + Send>,
    ) -> umwelt::Result<Self::Live>;
    /// Seconds recorded so far.
    fn seconds(live: &Self::Live) -> f32;
    /// Let go of the device (fast).
    fn close(live: Self::Live) -> Self::Closed;
    /// The last words, the recording kept, the draft written (slow; no lock held).
    fn finish(&self, closed: Self::Closed) -> umwelt::Result<Draft>;
    /// What the draft becomes by Settings → After dictation (typed into the focused app,
    /// saved); by default it stays a draft.
    fn after(&self, draft: Draft) -> AfterStop {
        AfterStop::kept(draft)
    }
}

/// Who uses the microphone.
enum Using<M: Microphones> {
    Nobody,
    /// Settings' level check: its thread holds the device.
    Checking {
        stop: Arc<AtomicBool>,
        thread: JoinHandle<()>,
    },
    /// A dictation, with its level meter's stop flag.
    Dictating {
        live: M::Live,
        meter_stop: Arc<AtomicBool>,
    },
}

/// The microphone's owner. Shared as `Arc<MicrophoneOwner<_>>` (its threads hold it too).
pub struct MicrophoneOwner<M: Microphones> {
    mics: M,
    using: Mutex<Using<M>>,
    events: Arc<dyn Emit>,
}

/// The owner of the system's microphones, as the app holds it.
pub type Microphone = MicrophoneOwner<SystemMicrophones>;

impl<M: Microphones> MicrophoneOwner<M> {
    pub fn new(mics: M, events: Arc<dyn Emit>) -> Arc<Self> {
        Arc::new(MicrophoneOwner {
            mics,
            using: Mutex::new(Using::Nobody),
            events,
        })
    }

    /// What it opens.
    pub fn mics(&self) -> &M {
        &self.mics
    }

    fn lock(&self) -> MutexGuard<'_, Using<M>> {
        self.using.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a dictation is being recorded.
    pub fn is_dictating(&self) -> bool {
        matches!(*self.lock(), Using::Dictating { .. })
    }

    /// Open `device` (or the chosen microphone) for its level, sent as `microphone-level`
    /// events ten times a second for at most [`CHECK_FOR`]; nothing is recorded. A check already
    /// running is replaced. Returns the device's name.
    pub fn start_check(self: &Arc<Self>, device: Option<String>) -> CmdResult<String> {
        let device = self.mics.choose(device);
        let mut using = self.lock();
        match &*using {
            Using::Dictating { .. } => {
                return Err(CommandError::new(
                    ErrorKind::Busy,
                    "a dictation is being recorded: the microphone is in use",
                ))
            }
            Using::Checking { .. } => end_check(&mut using),
            Using::Nobody => {}
        }
        let monitor = self.mics.open_check(device.as_deref())?;
        let name = monitor.device().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let events = self.events.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("umwelt-mic-check".into())
            .spawn(move || send_check_levels(monitor, &flag, &*events))
            .map_err(|e| CommandError::new(ErrorKind::Internal, e.to_string()))?;
        *using = Using::Checking { stop, thread };
        Ok(name)
    }

    /// End the level check, if one runs; returns once the device is closed.
    pub fn stop_check(&self) {
        let mut using = self.lock();
        if matches!(*using, Using::Checking { .. }) {
            end_check(&mut using);
        }
    }

    /// Start a dictation from `device` (or the chosen microphone), ending a level check first.
    /// Blocks while the models load (before the microphone is taken).
    pub fn start_dictation(self: &Arc<Self>, device: Option<String>) -> CmdResult<()> {
        if self.is_dictating() {
            return Err(already_dictating());
        }
        let device = self.mics.choose(device);
        let ready = self.mics.ready()?;
        let mut using = self.lock();
        match &*using {
            Using::Dictating { .. } => return Err(already_dictating()),
            Using::Checking { .. } => end_check(&mut using),
            Using::Nobody => {}
        }
        let events = self.events.clone();
        let on_heard = Box::new(move |h: &Heard| {
            events.emit(Event::DictationHeard(DictationHeard(h.clone())))
        });
        let live = self.mics.start(device.as_deref(), ready, on_heard)?;
        let device = live.device().to_string();
        let meter_stop = Arc::new(AtomicBool::new(false));
        let (owner, flag) = (self.clone(), meter_stop.clone());
        if let Err(e) = std::thread::Builder::new()
            .name("umwelt-meter".into())
            .spawn(move || owner.send_dictation_levels(&flag))
        {
            tracing::warn!("the level meter did not start ({e}); dictating without it");
        }
        *using = Using::Dictating { live, meter_stop };
        drop(using);
        self.events.emit(Event::DictationState(DictationState {
            device: Some(device),
            ..DictationState::new(DictationPhase::Listening)
        }));
        Ok(())
    }

    /// Stop the dictation: the last words are transcribed, a draft is made, and it becomes what
    /// Settings → After dictation says (typed, saved); the outcome is also announced.
    pub fn stop_dictation(&self) -> CmdResult<DictationState> {
        self.finish(None)
    }

    /// The shortcut or the button: start if idle, stop if dictating (stopping runs on a thread
    /// of its own; its result arrives as a `dictation-state` event).
    pub fn toggle(self: &Arc<Self>) {
        if self.is_dictating() {
            self.stop_in_background();
        } else if let Err(e) = self.start_dictation(None) {
            self.events
                .emit(Event::DictationState(DictationState::failed(e.message)));
        }
    }

    /// Stop without waiting (the shortcut's handler must not block).
    pub fn stop_in_background(self: &Arc<Self>) {
        let owner = self.clone();
        tauri::async_runtime::spawn_blocking(move || {
            // The outcome reaches the window as events; a refusal (nothing was recording) is
            // only worth a line in the log.
            if let Err(e) = owner.stop_dictation() {
                tracing::info!("the shortcut's stop: {}", e.message);
            }
        });
    }

    /// Stop, with `why` it stopped when the user did not press Stop (the microphone was lost):
    /// the draft's announcement carries it. The device is closed before the lock is let go.
    fn finish(&self, why: Option<String>) -> CmdResult<DictationState> {
        let closed = {
            let mut using = self.lock();
            match std::mem::replace(&mut *using, Using::Nobody) {
                Using::Dictating { live, meter_stop } => {
                    meter_stop.store(true, Ordering::Relaxed);
                    M::close(live)
                }
                other => {
                    *using = other;
                    return Err(CommandError::new(
                        ErrorKind::Input,
                        "nothing is being recorded: press Record first",
                    ));
                }
            }
        };
        self.events.emit(Event::DictationState(DictationState::new(
            DictationPhase::Transcribing,
        )));
        match self.mics.finish(closed) {
            Ok(draft) => {
                let problem = draft.problem.clone();
                let after = self.mics.after(draft);
                let message = match (why, problem) {
                    (Some(why), Some(problem)) => Some(format!("{why} {problem}")),
                    (Some(why), None) => Some(format!("{why} What was recorded is kept.")),
                    (None, problem) => problem,
                };
                let message = match (message, after.message) {
                    (Some(a), Some(b)) => Some(format!("{a} {b}")),
                    (a, b) => a.or(b),
                };
                let state = DictationState {
                    draft: after.draft,
                    memory: after.memory,
                    typed: after.typed,
                    message,
                    ..DictationState::new(DictationPhase::Ready)
                };
                self.events.emit(Event::DictationState(state.clone()));
                Ok(state)
            }
            Err(e) => {
                let message = match why {
                    Some(why) => format!("{why} {e}"),
                    None => e.to_string(),
                };
                self.events
                    .emit(Event::DictationState(DictationState::failed(message)));
                Err(e.into())
            }
        }
    }

    /// The `umwelt-meter` thread: the dictation's level ten times a second, read from the owner,
    /// until the dictation ends; a microphone that stopped (unplugged) stops the dictation,
    /// keeping what was captured.
    fn send_dictation_levels(&self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            let reading = match &*self.lock() {
                Using::Dictating { live, .. } => Some((
                    DictationLevel {
                        peak: live.level(),
                        seconds: M::seconds(live),
                    },
                    live.lost(),
                )),
                _ => None,
            };
            match reading {
                Some((_, Some(lost))) => {
                    if let Err(e) = self.finish(Some(lost)) {
                        tracing::warn!(
                            "stopping a dictation whose microphone was lost: {}",
                            e.message
                        );
                    }
                    return;
                }
                Some((level, None)) => self.events.emit(Event::DictationLevel(level)),
                None => return,
            }
            std::thread::sleep(LEVEL_EVERY);
        }
    }
}

fn already_dictating() -> CommandError {
    CommandError::new(
        ErrorKind::Busy,
        "a dictation is already being recorded: press Stop first",
    )
}

/// End the level check `using` holds (its thread closes the device before it ends).
fn end_check<M: Microphones>(using: &mut Using<M>) {
    if let Using::Checking { stop, thread } = std::mem::replace(using, Using::Nobody) {
        stop.store(true, Ordering::Relaxed);
        if thread.join().is_err() {
            tracing::warn!("the microphone check's thread crashed");
        }
    }
}

/// The `umwelt-mic-check` thread: `monitor`'s level until `stop`, [`CHECK_FOR`] or the device is
/// lost; then the device is closed and a last event says the check is over, and why.
fn send_check_levels(monitor: impl OpenMicrophone, stop: &AtomicBool, events: &dyn Emit) {
    let t0 = Instant::now();
    let device = monitor.device().to_string();
    let problem = loop {
        if stop.load(Ordering::Relaxed) || t0.elapsed() >= CHECK_FOR {
            break None;
        }
        if let Some(lost) = monitor.lost() {
            break Some(lost);
        }
        events.emit(Event::MicrophoneLevel(MicrophoneLevel {
            device: device.clone(),
            peak: monitor.level(),
            done: false,
            problem: None,
        }));
        std::thread::sleep(LEVEL_EVERY);
    };
    drop(monitor);
    events.emit(Event::MicrophoneLevel(MicrophoneLevel {
        device,
        peak: 0.0,
        done: true,
        problem,
    }));
}

/// The engine's open devices already answer the owner's questions by the same names.
macro_rules! open_microphone {
    ($($t:ty),*) => {$(
        impl OpenMicrophone for $t {
            fn device(&self) -> &str {
                <$t>::device(self)
            }
            fn level(&self) -> f32 {
                <$t>::level(self)
            }
            fn lost(&self) -> Option<String> {
                <$t>::lost(self)
            }
        }
    )*};
}

open_microphone!(Monitor, LiveDictation);

/// The system's microphones (cpal) and the engine's dictation, with the models it hears with.
pub struct SystemMicrophones {
    pub dictation: Arc<DictationDrafts>,
    pub transcriber: Arc<LazyTranscriber>,
    pub vad: Arc<LazyVad>,
    pub settings: Arc<Mutex<Settings>>,
    pub runs: Arc<Runs>,
    /// Where a dictation saved by Settings → After dictation goes: the window's notebook.
    pub store: Arc<Store>,
    pub scope: String,
    /// The focused app, the clipboard and notifications, for After dictation.
    pub desktop: Arc<Desktop>,
}

impl SystemMicrophones {
    /// The models and decoding dictation uses now (loading them if the idle timer unloaded
    /// them).
    pub fn ears(&self) -> umwelt::Result<Ears> {
        let decoding = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .decoding();
        Ears::from_loaded(&self.vad, &self.transcriber, decoding)
    }
}

impl Microphones for SystemMicrophones {
    type Check = Monitor;
    type Live = LiveDictation;
    type Closed = (ClosedDictation, Instant);
    type Ready = Ears;

    fn choose(&self, device: Option<String>) -> Option<String> {
        device.or_else(|| {
            self.settings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .microphone
                .clone()
        })
    }

    fn open_check(&self, device: Option<&str>) -> umwelt::Result<Monitor> {
        Monitor::open(device)
    }

    fn ready(&self) -> umwelt::Result<Ears> {
        self.ears()
    }

    fn start(
        &self,
        device: Option<&str>,
        ears: Ears,
        on_heard: Box<dyn FnMut(&Heard) + Send>,
    ) -> umwelt::Result<LiveDictation> {
        self.dictation.start(device, &ears, on_heard)
    }

    fn seconds(live: &LiveDictation) -> f32 {
        live.seconds()
    }

    fn close(live: LiveDictation) -> Self::Closed {
        (live.close(), Instant::now())
    }

    fn finish(&self, (closed, stopped): Self::Closed) -> umwelt::Result<Draft> {
        let draft = self.dictation.finish(closed)?;
        let ms = stopped.elapsed().as_secs_f64() * 1e3;
        if let Err(e) = self.runs.record(TimingKind::Dictation, now_ms(), ms) {
            tracing::warn!("the dictation's time was not recorded: {e}");
        }
        Ok(draft)
    }

    fn after(&self, draft: Draft) -> AfterStop {
        let after = self
            .settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .after_dictation;
        let out = self
            .dictation
            .after_stop(draft, after, &self.store, &self.scope, &*self.desktop);
        if let (true, Some(message)) = (out.tell, &out.message) {
            self.desktop
                .notify("Umwelt: your dictation was not typed", message);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Barrier;

    /// Counts the devices open at once; the owner must never let it pass one.
    #[derive(Default)]
    struct Counted {
        open: Arc<AtomicUsize>,
        most: Arc<AtomicUsize>,
    }

    struct Opened {
        open: Arc<AtomicUsize>,
    }

    impl Counted {
        fn open(&self) -> Opened {
            let now = self.open.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            std::thread::yield_now();
            Opened {
                open: self.open.clone(),
            }
        }
    }

    impl Drop for Opened {
        fn drop(&mut self) {
            self.open.fetch_sub(1, Ordering::SeqCst);
        }
    }

    impl OpenMicrophone for Opened {
        fn device(&self) -> &str {
            "counted"
        }
        fn level(&self) -> f32 {
            0.5
        }
        fn lost(&self) -> Option<String> {
            None
        }
    }

    impl Microphones for Counted {
        type Check = Opened;
        type Live = Opened;
        type Closed = ();
        type Ready = ();
        fn choose(&self, device: Option<String>) -> Option<String> {
            device
        }
        fn open_check(&self, _: Option<&str>) -> umwelt::Result<Opened> {
            Ok(self.open())
        }
        fn ready(&self) -> umwelt::Result<()> {
            Ok(())
        }
        fn start(
            &self,
            _: Option<&str>,
            _: (),
            _: Box<dyn FnMut(&Heard) + Send>,
        ) -> umwelt::Result<Opened> {
            Ok(self.open())
        }
        fn seconds(_: &Opened) -> f32 {
            0.0
        }
        fn close(live: Opened) {
            drop(live);
        }
        fn finish(&self, _: ()) -> umwelt::Result<Draft> {
            Ok(Draft {
                id: "1".into(),
                created_at: 1,
                seconds: 0.0,
                text: "text".into(),
                audio_path: String::new(),
                problem: None,
                source: "dictated".into(),
                segments: Vec::new(),
                file_name: None,
            })
        }
    }

    /// Keeps every event, so a test can read what the window would have been told.
    #[derive(Default)]
    struct Kept(Mutex<Vec<Event>>);

    impl Emit for Kept {
        fn emit(&self, event: Event) {
            self.0.lock().unwrap().push(event);
        }
    }

    #[test]
    fn a_check_and_a_dictation_started_at_once_never_share_the_microphone() {
        let mics = Counted::default();
        let (open, most) = (mics.open.clone(), mics.most.clone());
        let owner = MicrophoneOwner::new(mics, Arc::new(Kept::default()));
        let (mut checks_refused, mut checks_ended) = (0, 0);
        for round in 0..1000 {
            let barrier = Arc::new(Barrier::new(2));
            let (o, b) = (owner.clone(), barrier.clone());
            let check = std::thread::spawn(move || {
                b.wait();
                o.start_check(None)
            });
            let (o, b) = (owner.clone(), barrier);
            let dictate = std::thread::spawn(move || {
                b.wait();
                o.start_dictation(None)
            });
            let checked = check.join().expect("no panic");
            dictate
                .join()
                .expect("no panic")
                .expect("a dictation ends a check first");
            // Exactly one holds the microphone: the dictation. The check lost the race, or ran
            // and was ended by the dictation.
            assert!(owner.is_dictating(), "round {round}");
            assert_eq!(open.load(Ordering::SeqCst), 1, "round {round}");
            match checked {
                Err(e) => {
                    assert_eq!(e.kind, ErrorKind::Busy, "round {round}");
                    checks_refused += 1;
                }
                Ok(_) => checks_ended += 1,
            }
            owner.stop_dictation().expect("round {round}: stops");
            assert_eq!(open.load(Ordering::SeqCst), 0, "round {round}");
        }
        assert_eq!(
            most.load(Ordering::SeqCst),
            1,
            "two users held the microphone at once"
        );
        assert_eq!(checks_refused + checks_ended, 1000);
    }

    #[test]
    fn two_dictations_started_at_once_exactly_one_wins() {
        let mics = Counted::default();
        let most = mics.most.clone();
        let owner = MicrophoneOwner::new(mics, Arc::new(Kept::default()));
        for round in 0..1000 {
            let barrier = Arc::new(Barrier::new(2));
            let starts: Vec<_> = (0..2)
                .map(|_| {
                    let (o, b) = (owner.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        b.wait();
                        o.start_dictation(None)
                    })
                })
                .collect();
            let won = starts
                .into_iter()
                .map(|t| t.join().expect("no panic"))
                .filter(|r| r.is_ok())
                .count();
            assert_eq!(won, 1, "round {round}");
            owner.stop_dictation().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_check_is_refused_while_dictating_and_stopping_twice_says_why() {
        let kept = Arc::new(Kept::default());
        let owner = MicrophoneOwner::new(Counted::default(), kept.clone());
        owner.start_check(None).unwrap();
        owner.start_dictation(None).unwrap();
        let e = owner.start_check(None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Busy);
        assert!(e.message.contains("dictation"), "{}", e.message);
        let e = owner.start_dictation(None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Busy);
        assert_eq!(owner.stop_dictation().unwrap().draft.unwrap().text, "text");
        let e = owner.stop_dictation().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        // The check that the dictation ended said it was over.
        let events = kept.0.lock().unwrap();
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::MicrophoneLevel(l) if l.done)));
        let phases: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::DictationState(s) => Some(s.phase),
                _ => None,
            })
            .collect();
        assert_eq!(
            phases,
            [
                DictationPhase::Listening,
                DictationPhase::Transcribing,
                DictationPhase::Ready
            ]
        );
    }
}
