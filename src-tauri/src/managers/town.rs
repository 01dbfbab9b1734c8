//! The demo town: a small generated town in a file of its own (`demo-town.sqlite` beside the
//! user's memories, never in them), so a newcomer can explore who knows what at once. This
//! manager owns its one connection: built on request with progress, opened on first use after.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use umwelt::embed::LazyEmbedder;
use umwelt::{Error, Result, Store};

/// The demo town's days: big enough to have chains of tellings, built in seconds.
pub const DEMO_DAYS: usize = 60;

pub struct DemoTown {
    path: PathBuf,
    embedder: Arc<LazyEmbedder>,
    store: Mutex<Option<Arc<Store>>>,
    building: AtomicBool,
}

impl DemoTown {
    pub fn new(data_dir: &std::path::Path, embedder: Arc<LazyEmbedder>) -> DemoTown {
        DemoTown {
            path: data_dir.join("demo-town.sqlite"),
            embedder,
            store: Mutex::new(None),
            building: AtomicBool::new(false),
        }
    }

    /// The town's store, if it was built (opened on first use).
    pub fn store(&self) -> Result<Option<Arc<Store>>> {
        let mut s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        if s.is_none() && self.path.exists() {
            *s = Some(Arc::new(Store::open_with(
                &self.path,
                self.embedder.clone(),
            )?));
        }
        Ok(s.clone())
    }

    /// The town's store, or an error saying to load it first.
    pub fn require(&self) -> Result<Arc<Store>> {
        self.store()?.ok_or_else(|| {
            Error::NotFound("the demo town (press \u{201c}Load the demo town\u{201d} first)".into())
        })
    }

    /// Build the town afresh (a town already there is replaced), `progress(day, days)` after
    /// each day. Built into a temporary file and renamed, so a cancelled or failed build leaves
    /// the old town (or none) as it was.
    pub fn build(&self, cancel: &AtomicBool, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.building.swap(true, Ordering::AcqRel) {
            return Err(Error::InvalidInput(
                "the demo town is already being built".into(),
            ));
        }
        let result = (|| {
            let tmp = self.path.with_extension("building.sqlite");
            remove_db(&tmp);
            let built = umwelt::bench::town::build_town(
                &tmp,
                DEMO_DAYS,
                42,
                &mut |d| progress(d, DEMO_DAYS),
                cancel,
            );
            if let Err(e) = built {
                remove_db(&tmp);
                return Err(e);
            }
            let mut s = self.store.lock().unwrap_or_else(|p| p.into_inner());
            *s = None;
            remove_db(&self.path);
            std::fs::rename(&tmp, &self.path).map_err(|source| Error::Io {
                context: format!("moving the demo town to {}", self.path.display()),
                source,
            })?;
            *s = Some(Arc::new(Store::open_with(
                &self.path,
                self.embedder.clone(),
            )?));
            Ok(())
        })();
        self.building.store(false, Ordering::Release);
        result
    }
}

/// Remove a database file and its WAL companions, if there.
fn remove_db(p: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut f = p.as_os_str().to_owned();
        f.push(suffix);
        let _gone = std::fs::remove_file(f);
    }
}
