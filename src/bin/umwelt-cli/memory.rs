//! `remember`, `recall`, `list`, `delete`: the memory file.

use std::path::PathBuf;

use umwelt::{paths, Result, Store};

use crate::args::{DeleteArgs, ListArgs, RecallArgs, RememberArgs};

/// The memory file `--db` names, or the app's own.
pub fn open(db: &Option<PathBuf>) -> Result<Store> {
    Store::open(db.clone().unwrap_or_else(paths::default_db))
}

fn print_json<T: serde::Serialize>(v: &T) {
    println!("{}", serde_json::to_string_pretty(v).expect("serialisable"));
}

pub fn remember(db: &Option<PathBuf>, a: RememberArgs) -> Result<()> {
    let id = open(db)?.remember(&a.scope, &a.session, &a.text)?;
    println!("{id}");
    Ok(())
}

pub fn recall(db: &Option<PathBuf>, a: RecallArgs) -> Result<()> {
    let hits = open(db)?.recall(&a.query, &a.scope, a.session.as_deref(), a.k)?;
    if a.json {
        print_json(&hits);
    } else {
        for h in hits {
            println!("{:.3}  [{}] {}", h.score, h.memory.id, h.memory.text);
        }
    }
    Ok(())
}

pub fn list(db: &Option<PathBuf>, a: ListArgs) -> Result<()> {
    let list = open(db)?.list(&a.scope, a.limit, None)?;
    if a.json {
        print_json(&list);
    } else {
        for m in list {
            println!("[{}] {}", m.id, m.text);
        }
    }
    Ok(())
}

pub fn delete(db: &Option<PathBuf>, a: DeleteArgs) -> Result<()> {
    open(db)?.delete(a.id)
}
