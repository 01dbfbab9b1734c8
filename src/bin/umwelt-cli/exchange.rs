//! `import`, `export`: memories in and out.

use umwelt::exchange;
use umwelt::Result;

use crate::args::{ExportArgs, ImportArgs, MemoryFile};
use crate::memory::{open, print_json};

pub(crate) fn import(db: &MemoryFile, a: ImportArgs) -> Result<()> {
    let store = open(db)?;
    let t0 = std::time::Instant::now();
    let report = exchange::import_paths(&store, &a.paths, &a.scope)?;
    if a.json {
        print_json(&report);
    } else {
        for s in &report.skipped {
            eprintln!("skipped {}: {}", s.path, s.why);
        }
        for s in &report.unlinked {
            eprintln!("not linked, the recording {}: {}", s.path, s.why);
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "imported {}, skipped {} ({:.1} s, {:.0} notes/s)",
            report.imported.len(),
            report.skipped.len(),
            secs,
            report.imported.len() as f64 / secs.max(1e-9)
        );
    }
    Ok(())
}

pub(crate) fn export(db: &MemoryFile, a: ExportArgs) -> Result<()> {
    let e = exchange::export(&open(db)?)?;
    let overwrite = if a.overwrite {
        exchange::Overwrite::Yes
    } else {
        exchange::Overwrite::No
    };
    if let Some(file) = a.json {
        exchange::write_json(&e, &file, overwrite)?;
        println!(
            "exported {} memories to {}",
            e.memories.len(),
            file.display()
        );
    }
    if let Some(dir) = a.markdown {
        exchange::write_markdown(&e, &dir, overwrite)?;
        println!(
            "exported {} memories to {}",
            e.memories.len(),
            dir.display()
        );
    }
    Ok(())
}
