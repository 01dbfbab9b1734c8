//! `bench`: the benchmark harness on generated data, its report printed and kept.

use umwelt::{bench, Error, Result};

use crate::args::{BenchArgs, MemoryFile, NotebookArgs};

pub(crate) fn bench(a: BenchArgs) -> Result<()> {
    let before = match &a.compare {
        Some(p) => Some(bench::parse_report(&std::fs::read_to_string(p).map_err(
            |e| Error::Io {
                context: format!("reading {}", p.display()),
                source: e,
            },
        )?)?),
        None => None,
    };
    let config = bench::BenchConfig {
        suite: (a.suite != "engine").then_some(a.suite),
        scenarios: a.scenario,
        sizes: match a.days {
            Some(d) => vec![d],
            None => a.sizes,
        },
        fast: a.fast,
        iterations: a.iterations,
        warmup: None,
        cold: a.cold,
    };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let report = bench::run(
        &config,
        &mut |p| {
            if !p.scenario.is_empty() {
                eprintln!(
                    "[{}/{}] {} (size {})",
                    p.done + 1,
                    p.total,
                    p.scenario,
                    p.size
                );
            }
        },
        &cancel,
    )?;
    if a.markdown {
        print!("{}", bench::render_markdown(&report));
    } else {
        print!("{}", bench::render_table(&report));
    }
    if let Some(b) = before {
        println!("\nbefore → after ({}):", a.compare.unwrap().display());
        print!("{}", bench::render_compare(&b, &report));
    }
    if let Some(p) = a.json {
        std::fs::write(
            &p,
            serde_json::to_string_pretty(&report).expect("serialisable"),
        )
        .map_err(|e| Error::Io {
            context: format!("writing {}", p.display()),
            source: e,
        })?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// `notebook`: a new memory file filled with generated notes.
pub(crate) fn notebook(db: &MemoryFile, a: NotebookArgs) -> Result<()> {
    if db.passphrase_file.is_some() {
        return Err(Error::InvalidInput(
            "a notebook is made as a plain file: make it, then encrypt it with `umwelt-cli encrypt`"
                .into(),
        ));
    }
    let path = db.db.clone().unwrap_or_else(umwelt::paths::default_db);
    let t0 = std::time::Instant::now();
    umwelt::bench::corpus::build_notebook(&path, a.size, umwelt::clock::now_ms())?;
    eprintln!(
        "{} notes in {} ({:.1} s)",
        a.size,
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
