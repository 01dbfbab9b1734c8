//! Criterion over the harness's own scenario code (`umwelt::bench::Prepared`): `cargo bench`.
//! The scenarios that need a model run only when the models are installed.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use umwelt::bench::Prepared;

fn scenario(c: &mut Criterion, name: &str, size: usize, optimised: bool) {
    let mut p = match Prepared::new(name, size, optimised) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipping {name}/{size}: {e}");
            return;
        }
    };
    for w in 0..p.warmup {
        p.step(usize::MAX - w).expect("warm-up");
    }
    let mut i = 0;
    let id = format!("{name}/{size}/{}", if optimised { "on" } else { "off" });
    c.bench_function(&id, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += Duration::from_secs_f64(p.step(i).expect("scenario step") / 1e3);
                i += 1;
            }
            total
        })
    });
}

fn engine(c: &mut Criterion) {
    for (name, size) in [("recall", 10_000), ("recall_nofilter", 10_000)] {
        scenario(c, name, size, true);
        scenario(c, name, size, false);
    }
    // The large size builds a 100 000-memory corpus first (about a minute): on request only.
    if std::env::var_os("UMWELT_BENCH_100K").is_some() {
        scenario(c, "recall_nofilter", 100_000, true);
    }
    for (name, size) in [
        ("remember", 10_000),
        ("startup", 10_000),
        ("history", 2_000),
        ("turnlog", 0),
        ("embed", 1),
        ("embed", 32),
    ] {
        scenario(c, name, size, true);
    }
    umwelt::optimisations::set_enabled(None);
}

/// The town suite, on a town built beforehand (`umwelt-cli --db F town --days 3360`, then
/// `UMWELT_TOWN=F cargo bench`); skipped without one. The writes add to that file.
fn town(c: &mut Criterion) {
    let Some(file) = std::env::var_os("UMWELT_TOWN") else {
        eprintln!("skipping the town: set UMWELT_TOWN to a file made by `umwelt-cli town`");
        return;
    };
    let days = umwelt::bench::town::days_of(std::path::Path::new(&file)).expect("a town file");
    for name in [
        "holds",
        "holds_draft3",
        "holdings_about",
        "who_holds",
        "vector_holder",
        "vector_narrator",
        "hybrid_common_word",
        "embedding_put",
        "commit",
        "commit_batch",
        "witness",
    ] {
        scenario(c, name, days, true);
    }
    umwelt::optimisations::set_enabled(None);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = engine, town
}
criterion_main!(benches);
