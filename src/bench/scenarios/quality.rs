//! Quality: does retrieval find the note a question asks for, among ten thousand everyday notes
//! (the committed retrieval set, [`crate::bench::retrieval_set`])? Each measured iteration asks
//! one question, with the real model, and times embedding the question and the retrieval; the
//! row carries recall@1, recall@5 and MRR over the questions asked (all 120 by default).

use std::path::PathBuf;
use std::sync::Arc;

use super::{prepared, time, Ctx, Prepared, Sample, Scenario};
use crate::bench::retrieval_set::{BuiltSet, RetrievalSet, SCOPE};
use crate::embed::Embedder;
use crate::error::Result;
use crate::store::Store;

const K: usize = 10;
/// Every question of the set, once.
const QUESTIONS: usize = 120;

pub(super) const SCENARIOS: &[Scenario] = &[
    Scenario::new(
        "quality_recall",
        "finding the note a question means among 10 000 everyday notes: recall (meaning, recency)",
        |ctx, size| quality(ctx, size, Ask::Recall),
    )
    .needs_model()
    .sizes(&[10_000])
    .iterations(QUESTIONS)
    .both_ways(),
    Scenario::new(
        "quality_search",
        "finding the note a question means among 10 000 everyday notes: search (words and meaning), as the browser asks",
        |ctx, size| quality(ctx, size, Ask::Search),
    )
    // Issue 35: search p50 at 10 000 notes within 25 ms, the question's embedding included.
    .targets(&[(10_000, 25.0)])
    .needs_model()
    .sizes(&[10_000])
    .iterations(QUESTIONS)
    .both_ways(),
];

#[derive(Clone, Copy)]
enum Ask {
    Recall,
    Search,
}

/// The set with `size` distractors, built once per run (embedding 10 000 notes takes a while).
pub(super) fn built(
    ctx: &mut Ctx,
    size: usize,
    embedder: &Embedder,
) -> Result<(PathBuf, Arc<BuiltSet>)> {
    if let Some((n, path, set)) = &ctx.retrieval {
        if *n == size {
            return Ok((path.clone(), set.clone()));
        }
    }
    let path = ctx.fresh("retrieval");
    let set = RetrievalSet::committed().build(&path, size, embedder, ctx.cancel)?;
    let set = Arc::new(set);
    ctx.retrieval = Some((size, path.clone(), set.clone()));
    Ok((path, set))
}

fn quality(ctx: &mut Ctx, size: usize, ask: Ask) -> Result<Prepared> {
    let embedder = Embedder::load()?;
    let (path, set) = built(ctx, size, &embedder)?;
    // Opened for each mode: the switch decides at opening how the store reads.
    let store = Store::open(&path)?;
    let questions = RetrievalSet::committed().questions;
    let now = RetrievalSet::asked_at();
    let answers: Vec<i64> = questions.iter().map(|q| set.answer(q)).collect();
    let n = questions.len();
    Ok(prepared(ctx.warmup, move |i| {
        let q = questions[i % n].text;
        let (ms, ids) = time(|| {
            let v = embedder.embed_one(q)?;
            Ok(match ask {
                Ask::Recall => store
                    .recall_vector(&v, SCOPE, None, K, now)?
                    .into_iter()
                    .map(|h| h.memory.id)
                    .collect::<Vec<_>>(),
                Ask::Search => store
                    .search_with_vector(q, &v, SCOPE, None, K, now)?
                    .into_iter()
                    .map(|h| h.memory.id)
                    .collect(),
            })
        })?;
        Ok(Sample { ms, ids: Some(ids) })
    })?
    .answers(move |i| answers[i % n]))
}
