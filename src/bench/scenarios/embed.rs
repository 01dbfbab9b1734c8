//! The embedding model itself.

use super::{prepared, time, timed, Ctx, Prepared, Scenario};
use crate::embed::Embedder;
use crate::error::Result;

pub(super) const SCENARIOS: &[Scenario] =
    &[
        Scenario::new("embed", "the real model: one text, a batch of 32", embed)
            .needs_model()
            .targets(&[(1, 6.0), (32, 170.0)])
            .sizes(&[1, 32]),
    ];

/// Embedding `size` texts at once.
fn embed(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let e = Embedder::load()?;
    let all = embed_texts();
    let texts: Vec<&'static str> = (0..size).map(|i| all[i % all.len()]).collect();
    prepared(ctx.warmup, move |_| timed(time(|| e.embed(&texts))?.0))
}

/// Sentences of everyday length for the embed scenario, one per line (the peers' script reads
/// the same file).
const EMBED_TEXTS_FILE: &str = include_str!("../embed_texts.txt");

fn embed_texts() -> Vec<&'static str> {
    EMBED_TEXTS_FILE.lines().filter(|l| !l.is_empty()).collect()
}
