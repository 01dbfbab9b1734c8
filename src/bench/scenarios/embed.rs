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
    let texts: Vec<&'static str> = (0..size)
        .map(|i| EMBED_TEXTS[i % EMBED_TEXTS.len()])
        .collect();
    prepared(ctx.warmup, move |_| timed(time(|| e.embed(&texts))?.0))
}

/// Sentences of everyday length for the embed scenario.
const EMBED_TEXTS: &[&str] = &[
    "remember to buy milk",
    "the dentist appointment moved to Tuesday at nine in the morning",
    "Anna's birthday is on the fourteenth; she wanted the blue scarf from the market",
    "the wifi password at the cabin is written on the back of the fridge door",
    "call the plumber about the dripping tap in the upstairs bathroom before the weekend",
    "parking is on level three, spot forty-two",
    "idea: a small garden with herbs on the balcony, basil, thyme and mint",
    "the project review is next Thursday; bring the numbers from the last quarter and the draft plan",
];
