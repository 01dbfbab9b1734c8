//! `remember`, `recall`, `list`, `delete`: the memory file.

use std::sync::Arc;

use umwelt::at_rest;
use umwelt::embed::LazyEmbedder;
use umwelt::keyring::SystemKeyring;
use umwelt::store::cipher::Key;
use umwelt::store::conversion::{self, Direction};
use umwelt::{paths, Error, Result, Store};

use crate::args::{
    DeleteArgs, EditArgs, ListArgs, MemoryFile, RecallArgs, RememberArgs, SearchArgs,
};

/// The memory file `--db` names, or the app's own, opened with `--passphrase-file`'s
/// passphrase when one is given.
pub(crate) fn open(db: &MemoryFile) -> Result<Store> {
    let key = db
        .passphrase_file
        .as_deref()
        .map(Key::from_passphrase_file)
        .transpose()?;
    let path = match &db.db {
        Some(db) => db.clone(),
        None => {
            // The app's own data folder: private, as the app keeps it.
            if let Err(e) = paths::secure_data_dir(&paths::data_dir()) {
                tracing::warn!("the data folder could not be made private: {e}");
            }
            paths::default_db()
        }
    };
    // No passphrase: an encrypted file opens with the key the app keeps in the keyring.
    let key = match (key, umwelt::store::cipher::test_key()) {
        (Some(k), _) => Some(k),
        (None, Some(test)) => Some(test.clone()),
        (None, None) => at_rest::key_for(&path, &SystemKeyring::for_file(&path))?,
    };
    Store::open_keyed(path, Arc::new(LazyEmbedder::new()), key.as_ref())
}

/// `encrypt` / `decrypt`: the memory file converted in place with `--passphrase-file`'s key,
/// then its recordings sealed or unsealed (a kill between leaves every recording readable; the
/// app's next start, or `Store::settle_recordings`, finishes them).
pub(crate) fn convert(db: &MemoryFile, way: Direction) -> Result<()> {
    let Some(pass) = db.passphrase_file.as_deref() else {
        return Err(Error::InvalidInput(
            "give the passphrase with --passphrase-file FILE (one line)".into(),
        ));
    };
    let key = Key::from_passphrase_file(pass)?;
    let path = db.db.clone().unwrap_or_else(paths::default_db);
    let store = match way {
        Direction::Encrypt => {
            conversion::encrypt(&path, &key)?;
            Store::open_keyed(&path, Arc::new(LazyEmbedder::new()), Some(&key))?
        }
        Direction::Decrypt => {
            conversion::decrypt(&path, &key)?;
            Store::open_keyed(&path, Arc::new(LazyEmbedder::new()), None)?
        }
    };
    let left = store.settle_recordings()?;
    if let Some(first) = left.first() {
        return Err(Error::InvalidInput(format!(
            "{} recordings could not be {} now ({first}); they stay whole as they were, and the app finishes them at its next start",
            left.len(),
            if store.is_encrypted() { "encrypted" } else { "made plain" }
        )));
    }
    let done = match way {
        Direction::Encrypt => "encrypted",
        Direction::Decrypt => "plain again",
    };
    eprintln!("{} is {done}", path.display());
    Ok(())
}

pub(crate) fn print_json<T: serde::Serialize>(v: &T) {
    println!("{}", serde_json::to_string_pretty(v).expect("serialisable"));
}

pub(crate) fn remember(db: &MemoryFile, a: RememberArgs) -> Result<()> {
    let id = open(db)?.remember(&a.scope, &a.session, &a.text)?;
    println!("{id}");
    Ok(())
}

pub(crate) fn recall(db: &MemoryFile, a: RecallArgs) -> Result<()> {
    let hits = open(db)?.recall(&a.query, &a.scope, a.session.as_deref(), a.k)?;
    if a.json {
        print_json(&hits);
    } else {
        for h in hits {
            println!("{:.3}  [{}] {}", h.score, h.memory.id, h.memory.text);
            print_similar(&h.similar);
        }
    }
    Ok(())
}

/// "and 2 similar notes: [12] [40]" beneath a hit with near-copies.
fn print_similar(similar: &[umwelt::store::Memory]) {
    if !similar.is_empty() {
        let ids: Vec<String> = similar.iter().map(|m| format!("[{}]", m.id)).collect();
        let notes = if similar.len() == 1 { "note" } else { "notes" };
        println!(
            "        and {} similar {notes}: {}",
            similar.len(),
            ids.join(" ")
        );
    }
}

pub(crate) fn search(db: &MemoryFile, a: SearchArgs) -> Result<()> {
    let hits = open(db)?.search(&a.query, &a.scope, a.session.as_deref(), a.k)?;
    if a.json {
        if a.explain {
            print_json(&hits);
        } else {
            print_json(&hits.iter().map(|h| &h.memory).collect::<Vec<_>>());
        }
        return Ok(());
    }
    for h in hits {
        println!("{:.4}  [{}] {}", h.score, h.memory.id, h.memory.text);
        print_similar(&h.similar);
        if a.explain {
            let w = &h.why;
            let rank = |r: Option<u32>| r.map_or("—".to_string(), |r| r.to_string());
            println!(
                "        exact phrase: {}; keyword rank {} (bm25 {}, weight {:.2}); meaning rank {} (similarity {}); recency {:.3}",
                if w.exact_phrase { "yes" } else { "no" },
                rank(w.keyword_rank),
                w.bm25.map_or("—".into(), |b| format!("{b:.2}")),
                w.words_weight,
                rank(w.meaning_rank),
                w.similarity.map_or("—".into(), |s| format!("{s:.3}")),
                w.recency
            );
        }
    }
    Ok(())
}

pub(crate) fn edit(db: &MemoryFile, a: EditArgs) -> Result<()> {
    let store = open(db)?;
    if a.versions {
        let versions = store.versions(a.id)?;
        if a.json {
            print_json(&versions);
        } else {
            for v in versions {
                println!("version {} (replaced at {}): {}", v.id, v.edited_at, v.text);
            }
        }
        return Ok(());
    }
    let m = match (a.restore, &a.text) {
        (Some(v), _) => store.restore(a.id, v)?,
        (None, Some(text)) => store.edit(a.id, text)?,
        (None, None) => unreachable!("clap requires a text, --versions or --restore"),
    };
    if a.json {
        print_json(&m);
    } else {
        println!("[{}] {}", m.id, m.text);
    }
    Ok(())
}

pub(crate) fn list(db: &MemoryFile, a: ListArgs) -> Result<()> {
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

pub(crate) fn delete(db: &MemoryFile, a: DeleteArgs) -> Result<()> {
    open(db)?.delete(a.id)
}
