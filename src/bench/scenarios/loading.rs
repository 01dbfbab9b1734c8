//! Loading each model from its file (in the system's cache, as on any launch but the first after
//! a reboot): what loading on first use, or on the first focus of the Record button, would make
//! the user wait, against the memory that loading at start keeps.

use super::{prepared, time, timed, Ctx, Prepared, Scenario};
use crate::embed::Embedder;
use crate::error::Result;
use crate::speech::Ears;
use crate::voice::kokoro::Kokoro;

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "load_embedder",
        "loading the embedding model and its tokenizer (what the first search would wait for)",
        |ctx, _| load(ctx, || Embedder::load().map(drop)),
    )
    .needs_model()
    .iterations(5),
    Scenario::new(
        "load_ears",
        "loading whisper tiny.en and the VAD (what the first dictation would wait for)",
        |ctx, _| load(ctx, || Ears::load().map(drop)),
    )
    .needs_model()
    .iterations(5),
    Scenario::new(
        "load_voice",
        "loading the Kokoro voice model (what the first reply read aloud would wait for)",
        |ctx, _| load(ctx, || Kokoro::load().map(drop)),
    )
    .needs_model()
    .iterations(5),
];

/// Each step loads the model afresh and drops it; the warm-up puts its files in the cache.
fn load(ctx: &mut Ctx, load: impl Fn() -> Result<()> + 'static) -> Result<Prepared> {
    prepared(ctx.warmup.max(1), move |_| timed(time(&load)?.0))
}
