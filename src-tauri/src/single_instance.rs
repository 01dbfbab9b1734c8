//! One Umwelt per data folder. The first launch holds `<data>/umwelt.lock` (an exclusive file
//! lock, released by the system when the process ends, however it ends) and listens on
//! `<data>/umwelt.sock`; a second launch on the same folder finds the lock taken, asks the first
//! to bring its window to the front, and exits without opening a window or the memory file.
//!
//! (Keyed by the data folder rather than by the app's name, as Tauri's single-instance plugin
//! is: two instances on two folders share nothing, and the end-to-end tests run apps side by
//! side on folders of their own. No D-Bus needed.)

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What this launch is.
pub enum Instance {
    /// The first: it holds the lock (keep this value alive as long as the app runs).
    First(FirstInstance),
    /// Another launch holds the folder; its window was asked to come to the front.
    AlreadyRunning,
}

pub struct FirstInstance {
    _lock: std::fs::File,
    socket: PathBuf,
}

/// What a second launch sends.
const FOCUS: &str = "focus";

/// Take the folder, or hand over to the launch that has it.
pub fn claim(data_dir: &Path) -> std::io::Result<Instance> {
    std::fs::create_dir_all(data_dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(data_dir.join("umwelt.lock"))?;
    let socket = data_dir.join("umwelt.sock");
    match lock.try_lock() {
        Ok(()) => Ok(Instance::First(FirstInstance {
            _lock: lock,
            socket,
        })),
        Err(std::fs::TryLockError::WouldBlock) => {
            ask_to_focus(&socket)?;
            Ok(Instance::AlreadyRunning)
        }
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The first launch may still be starting (its socket not bound yet): try for a few seconds.
#[cfg(unix)]
fn ask_to_focus(socket: &Path) -> std::io::Result<()> {
    let t0 = Instant::now();
    loop {
        match std::os::unix::net::UnixStream::connect(socket) {
            Ok(mut s) => return writeln!(s, "{FOCUS}"),
            Err(e) if t0.elapsed() > Duration::from_secs(10) => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

#[cfg(not(unix))]
fn ask_to_focus(_socket: &Path) -> std::io::Result<()> {
    Ok(())
}

impl FirstInstance {
    /// Listen for later launches; `focus` is called (on the listener's thread) for each.
    #[cfg(unix)]
    pub fn listen(&self, focus: impl Fn() + Send + 'static) -> std::io::Result<()> {
        // A socket file left by a crashed launch: the lock says it is nobody's now.
        match std::fs::remove_file(&self.socket) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = std::os::unix::net::UnixListener::bind(&self.socket)?;
        std::thread::Builder::new()
            .name("umwelt-instance".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let mut line = String::new();
                    let read = BufReader::new(stream).read_line(&mut line);
                    if read.is_ok() && line.trim() == FOCUS {
                        tracing::info!(
                            "another launch asked for the window: brought it to the front"
                        );
                        focus();
                    }
                }
            })?;
        Ok(())
    }

    #[cfg(not(unix))]
    pub fn listen(&self, _focus: impl Fn() + Send + 'static) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_second_launch_on_the_same_folder_asks_the_first_to_focus_and_another_folder_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let Instance::First(first) = claim(dir.path()).unwrap() else {
            panic!("the first launch must get the folder");
        };
        let focused = Arc::new(AtomicUsize::new(0));
        let f = focused.clone();
        first
            .listen(move || {
                f.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        assert!(matches!(
            claim(dir.path()).unwrap(),
            Instance::AlreadyRunning
        ));
        assert!(matches!(
            claim(dir.path()).unwrap(),
            Instance::AlreadyRunning
        ));
        let t0 = Instant::now();
        while focused.load(Ordering::SeqCst) < 2 && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(focused.load(Ordering::SeqCst), 2);
        // Another folder is another instance.
        let other = tempfile::tempdir().unwrap();
        assert!(matches!(claim(other.path()).unwrap(), Instance::First(_)));
        // Once the first ends, the folder is free again (a left-over socket file is no matter).
        drop(first);
        let Instance::First(again) = claim(dir.path()).unwrap() else {
            panic!("the folder is free once the first launch has gone");
        };
        again.listen(|| {}).unwrap();
    }
}
