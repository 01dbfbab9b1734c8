//! The speaker's one owner: the reply being spoken (or the recording being played), if one is. Starting a reply stops the one
//! before and keeps the new one's stopper in one step under one lock, so two replies asked for
//! at once never play together and the one playing can always be stopped.

use std::sync::{Arc, Mutex};

use umwelt::voice::{Output, SpeakOptions, Speaker, Speech, Stopper};

/// The voice and the reply it is speaking.
pub struct SpeakerOwner {
    /// The voice (Kokoro), loaded on first use or by the warm-up.
    pub speaker: Arc<Speaker>,
    speaking: Mutex<Option<Stopper>>,
}

impl SpeakerOwner {
    pub fn new(speaker: Arc<Speaker>) -> SpeakerOwner {
        SpeakerOwner {
            speaker,
            speaking: Mutex::new(None),
        }
    }

    /// Stop the reply being spoken, then start `text` (loading the voice if need be: call it
    /// from a blocking thread). Returns at once; the reply plays on its own threads.
    pub fn speak(
        &self,
        text: &str,
        options: &SpeakOptions,
        output: Output,
    ) -> umwelt::Result<Speech> {
        let mut speaking = self.speaking.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(before) = speaking.take() {
            before.stop();
        }
        let speech = self.speaker.speak(text, options, output)?;
        *speaking = Some(speech.stopper());
        Ok(speech)
    }

    /// Stop what is playing, then play the recording at `path` (a memory's original audio).
    pub fn play_recording(
        &self,
        path: &std::path::Path,
        seal: Option<&umwelt::sealed::Seal>,
        output: Output,
    ) -> umwelt::Result<Speech> {
        let mut speaking = self.speaking.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(before) = speaking.take() {
            before.stop();
        }
        let speech = self.speaker.play_recording(path, seal, output)?;
        *speaking = Some(speech.stopper());
        Ok(speech)
    }

    /// Stop the reply being spoken (nothing happens when none is).
    pub fn stop(&self) {
        if let Some(s) = self
            .speaking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            s.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const LONG: &str = "This reply is long enough to take half a minute to read aloud. It goes on \
        about the weather, the shopping, the dentist on Tuesday, the holiday plans, and then it \
        goes on some more, sentence after sentence, so that a reply that is not stopped is easy \
        to tell from one that is. And then there is one more sentence, and another one after it.";

    /// Two replies asked for at the same moment (two presses while the voice loads), then Stop:
    /// neither plays on, so both end within a moment of Stop instead of after half a minute.
    #[test]
    fn two_replies_asked_for_at_once_then_stop_leave_nothing_playing() {
        let owner = SpeakerOwner::new(Arc::new(Speaker::new()));
        for round in 0..3 {
            let barrier = std::sync::Barrier::new(2);
            let (a, b) = std::thread::scope(|s| {
                let one = s.spawn(|| {
                    barrier.wait();
                    owner.speak(LONG, &SpeakOptions::default(), Output::Paced)
                });
                let two = s.spawn(|| {
                    barrier.wait();
                    owner.speak(LONG, &SpeakOptions::default(), Output::Paced)
                });
                (one.join().unwrap().unwrap(), two.join().unwrap().unwrap())
            });
            owner.stop();
            let t0 = Instant::now();
            for speech in [a, b] {
                let report = speech.wait().unwrap();
                assert!(
                    report.audio_seconds < 10.0,
                    "round {round}: a reply played {} s after Stop",
                    report.audio_seconds
                );
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "round {round}: the replies took {:?} to end after Stop",
                t0.elapsed()
            );
        }
    }
}
