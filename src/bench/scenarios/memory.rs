//! Resident memory of the app's engine, each figure from a fresh process
//! (`bench/memory_probe.rs`): once warm, while dictating, while speaking. The index's own share
//! per 100 000 memories is `index_memory` (`store.rs`).

use super::{prepared, timed, Ctx, Prepared, Scenario};
use crate::bench::memory_probe::{measure, Probe};
use crate::error::Result;

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "rss_warm",
        "resident memory (MiB, not ms) of a fresh process holding what the app's warm-up loads, and this many memories' index",
        |ctx, size| probe(ctx, size, Probe::Warm),
    )
    .needs_model()
    .targets(&[(10_000, RSS_WARM_MIB)])
    .sizes(&[10_000])
    .iterations(3)
    .corpus_sized(),
    Scenario::new(
        "rss_dictating",
        "highest resident memory (MiB) while dictating a five-second sentence, warm as rss_warm",
        |ctx, size| probe(ctx, size, Probe::Dictating),
    )
    .needs_model()
    .targets(&[(10_000, RSS_WARM_MIB + 32.0)])
    .sizes(&[10_000])
    .iterations(3)
    .corpus_sized(),
    Scenario::new(
        "rss_speaking",
        "highest resident memory (MiB) while reading a four-sentence reply aloud, warm as rss_warm",
        |ctx, size| probe(ctx, size, Probe::Speaking),
    )
    .needs_model()
    .targets(&[(10_000, RSS_WARM_MIB + 64.0)])
    .sizes(&[10_000])
    .iterations(3)
    .corpus_sized(),
    Scenario::new(
        "rss_after_speaking",
        "resident memory (MiB) once that reply has been read aloud, warm as rss_warm",
        |ctx, size| probe(ctx, size, Probe::Spoke),
    )
    .needs_model()
    .targets(&[(10_000, RSS_WARM_MIB)])
    .sizes(&[10_000])
    .iterations(3)
    .corpus_sized(),
];

/// The warm engine's budget: the model files it holds (MiniLM 21.9 MiB, whisper tiny.en 74.1 as
/// f16 when the budget was set (41.5 as q8_0 since; the budget stays), the VAD 2.2, Kokoro 88.1
/// and a voice 0.5, ONNX Runtime's library 28.0: 215 MiB) half again
/// for the runtimes' working memory and code, and the index of 10 000 memories (17 MiB). While
/// dictating, whisper's working state for one 30 s window (+32 MiB); while speaking, Kokoro's for
/// the longest phrase (+64 MiB). Once the reply has been read, the voice gives its working memory
/// back: the warm budget again. docs/PERFORMANCE.md, "Memory, measured".
const RSS_WARM_MIB: f64 = 340.0;

fn probe(ctx: &mut Ctx, size: usize, what: Probe) -> Result<Prepared> {
    let db = ctx.corpus(size)?.path.clone();
    prepared(0, move |_| timed(measure(what, &db)?))
}
