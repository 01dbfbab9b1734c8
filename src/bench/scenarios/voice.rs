//! Reading aloud: the first sound, synthesis speed, planned pauses and underruns.

use super::{prepared, timed, Ctx, Prepared, Scenario};
use crate::bench::dictation::SPEAK_REPLY;
use crate::error::{Error, Result};
use crate::voice::{self, Output, SpeakOptions, Speaker};

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "speak_first_audio",
        "from \"speak\" to the first sample taken by a real-time output, one typical sentence",
        speak_first_audio,
    )
    .needs_model()
    .targets(&[(0, 500.0)])
    .iterations(10)
    .both_ways(),
    Scenario::new(
        "tts_rtf",
        "synthesis per second of speech, in ms (real-time factor × 1000), one sentence",
        tts_rtf,
    )
    .needs_model()
    .targets(&[(0, 500.0)])
    .iterations(10),
    Scenario::new(
        "speak_planned_pause",
        "pause the voice planned between two words to stay ahead, per four-sentence reply (ms)",
        speak_planned_pause,
    )
    .needs_model()
    .iterations(3),
    Scenario::new(
        "speak_underruns",
        "times playback ran dry in a streamed four-sentence reply (a count, not ms)",
        speak_underruns,
    )
    .needs_model()
    .targets(&[(0, 0.0)])
    .iterations(3),
];

/// A typical sentence read back (the voice scenarios).
const SPEAK_SENTENCE: &str =
    "You said the dentist moved your appointment to Thursday at nine, after lunch.";

/// The default voice, loaded and warmed up.
fn speaker() -> Result<(Speaker, SpeakOptions)> {
    let speaker = Speaker::new();
    speaker.warm_up(voice::DEFAULT_VOICE)?;
    Ok((speaker, SpeakOptions::default()))
}

fn speak_first_audio(_: &mut Ctx, _: usize) -> Result<Prepared> {
    let (speaker, opts) = speaker()?;
    prepared(1, move |_| {
        let speech = speaker.speak(SPEAK_SENTENCE, &opts, Output::Paced)?;
        let ms = speech.wait_first_audio(std::time::Duration::from_secs(30));
        speech.stop();
        speech.wait()?;
        timed(ms.ok_or_else(|| Error::Audio("no audio came out".into()))?)
    })
}

fn tts_rtf(_: &mut Ctx, _: usize) -> Result<Prepared> {
    let (speaker, opts) = speaker()?;
    prepared(1, move |_| {
        let r = speaker
            .speak(SPEAK_SENTENCE, &opts, Output::Collect)?
            .wait()?;
        timed(r.rtf * 1e3)
    })
}

fn speak_planned_pause(_: &mut Ctx, _: usize) -> Result<Prepared> {
    let (speaker, opts) = speaker()?;
    prepared(1, move |_| {
        let r = speaker.speak(SPEAK_REPLY, &opts, Output::Paced)?.wait()?;
        timed(r.planned_pause_ms)
    })
}

fn speak_underruns(_: &mut Ctx, _: usize) -> Result<Prepared> {
    let (speaker, opts) = speaker()?;
    prepared(1, move |_| {
        let r = speaker.speak(SPEAK_REPLY, &opts, Output::Paced)?.wait()?;
        timed(r.underruns as f64)
    })
}
