//! The speaker's one owner: the reply being spoken, if one is. Starting a reply stops the one
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
