//! Speech to text: whisper on a sample, live dictation, word error rate, an hour's memory.

use super::{prepared, time, timed, Ctx, Prepared, Scenario};
use crate::bench::dictation::{self, VoiceKind};
use crate::error::{Error, Result};
use crate::speech::{wer, Decoding, Ears, Transcriber};

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "stt",
        "whisper tiny.en on a 5.7 s spoken sample (off: whisper's full 30 s context)",
        stt,
    )
    .needs_model()
    .iterations(5)
    .both_ways(),
    Scenario::new(
        "dictation_final",
        "from Stop (half a second after the last word of a 5 s sentence) to the final text",
        |_, _| live_dictation(Until::Final, false),
    )
    .needs_model()
    .targets(&[(0, 600.0)])
    .iterations(5)
    .both_ways(),
    Scenario::new(
        "dictation_final_busy",
        "dictation_final while another process keeps one core busy (a user's machine is rarely idle)",
        |_, _| live_dictation(Until::Final, true),
    )
    .needs_model()
    .targets(&[(0, 600.0)])
    .iterations(5)
    .both_ways(),
    Scenario::new(
        "dictation_first_partial",
        "from the first word spoken to the first text on screen, fed at the pace of speech",
        |_, _| live_dictation(Until::FirstText, false),
    )
    .needs_model()
    .targets(&[(0, 1500.0)])
    .iterations(5),
    Scenario::new(
        "stt_wer_formant",
        "word error rate (%, not ms) on the 24-utterance dictation set, espeak-ng voices",
        |_, _| word_error_rate(VoiceKind::Formant),
    )
    .needs_model()
    .targets(&[(0, 20.0)])
    .iterations(1)
    .both_ways(),
    Scenario::new(
        "stt_wer_neural",
        "word error rate (%, not ms) on the 24-utterance dictation set, Kokoro voices",
        |_, _| word_error_rate(VoiceKind::Neural),
    )
    .needs_model()
    .targets(&[(0, 4.0)])
    .iterations(1)
    .both_ways(),
    Scenario::new(
        "dictation_hour_memory",
        "resident memory growth (MiB, not ms) from minute 10 to 60 of an hour's dictation",
        hour_memory,
    )
    .needs_model()
    .targets(&[(0, 8.0)])
    .iterations(1),
    Scenario::new(
        "spool",
        "a quarter second of microphone audio written to the recording spool and flushed to the disk (sealed with UMWELT_TEST_ENCRYPTION=on): it must stay well within the quarter second",
        spool,
    )
    .targets(&[(0, 250.0)])
    .iterations(400),
];

const STT_SAMPLE: &[u8] = include_bytes!("../../../benches/data/stt-sample.wav");

/// Whisper on the committed spoken sample.
fn stt(ctx: &mut Ctx, _: usize) -> Result<Prepared> {
    let t = Transcriber::load()?;
    let wav = ctx.dir.path().join("stt-sample.wav");
    std::fs::write(&wav, STT_SAMPLE).map_err(Error::io("writing the stt sample"))?;
    let pcm = crate::audio::read_wav_16k_mono(&wav)?;
    prepared(1, move |_| timed(time(|| t.transcribe(&pcm))?.0))
}

/// What a live dictation scenario times.
enum Until {
    /// From Stop to the final text.
    Final,
    /// From the first word to the first text shown.
    FirstText,
}

/// A five-second sentence dictated live, with one core kept busy if `busy`.
fn live_dictation(until: Until, busy: bool) -> Result<Prepared> {
    let ears = Ears::load()?;
    let speech = dictation::neural(dictation::FIVE_SECONDS)?;
    prepared(1, move |_| {
        let _load = busy.then(dictation::BusyCore::start).transpose()?;
        let t = dictation::live_dictation(&ears, &speech, 0.5, 0.5)?;
        if wer::word_error_rate(dictation::FIVE_SECONDS, &t.text) > 0.3 {
            return Err(Error::Audio(format!(
                "the sentence came back as {:?}",
                t.text
            )));
        }
        match until {
            Until::FirstText => timed(
                t.first_text_ms
                    .ok_or_else(|| Error::Audio("no text was shown while speaking".into()))?,
            ),
            Until::Final => timed(t.final_ms),
        }
    })
}

/// Word error rate (in %) of whisper on the dictation set spoken by `kind` voices.
fn word_error_rate(kind: VoiceKind) -> Result<Prepared> {
    let t = Transcriber::load()?;
    let clips = dictation::clips(kind, None)?;
    prepared(0, move |_| {
        let s = dictation::score(&t, &clips, &Decoding::default())?;
        timed(s.wer * 100.0)
    })
}

fn hour_memory(ctx: &mut Ctx, _: usize) -> Result<Prepared> {
    let ears = Ears::load()?;
    let dir = ctx.dir.path().join("hour");
    prepared(0, move |_| {
        timed(dictation::hour_of_dictation(&ears, &dir)?)
    })
}

/// One spool chunk (a quarter second at 48 kHz, a common microphone's rate) appended and
/// flushed, as the recorder does four times a second; sealed with the tests' key when
/// `UMWELT_TEST_ENCRYPTION=on`, so the cost of sealing is one run against another.
fn spool(ctx: &mut Ctx, _size: usize) -> Result<Prepared> {
    use crate::speech::spool::SpoolWriter;
    let rate = 48_000;
    let dir = ctx.dir.path().join("spool");
    let mut writer = SpoolWriter::create(&dir, rate, crate::sealed::Seal::for_tests())?;
    let chunk: Vec<f32> = (0..rate as usize / 4)
        .map(|i| (i as f32 * 0.01).sin() * 0.3)
        .collect();
    prepared(ctx.warmup, move |_| {
        timed(time(|| writer.append(&chunk))?.0)
    })
}
