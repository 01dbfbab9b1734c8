//! One Umwelt per data folder. The first launch holds `<data>/umwelt.lock` (an exclusive file
//! lock, released by the system when the process ends, however it ends) and listens on
//! `<data>/umwelt.sock`; a second launch on the same folder finds the lock taken, asks the first
//! to bring its window to the front, and exits without opening a window or the memory file.
//!
//! (Keyed by the data folder rather than by the app's name, as Tauri's single-instance plugin
//! is: two instances on two folders share nothing, and the end-to-end tests run apps side by
//! side on folders of their own. No D-Bus needed.)
//!
//! The lock decides: a second launch that finds it taken never starts, even when the first
//! cannot be reached. The socket sits in the data folder (0700, the socket itself 0600) unless
//! that path is too long for a Unix socket, when it sits in the user's runtime folder under a
//! name made from the data folder. The listener reads at most a short line from each caller and
//! waits at most [`READ_TIMEOUT`] for it, so a caller that says nothing delays the next by that
//! at most.

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What this launch is.
pub enum Instance {
    /// The first: it holds the lock (keep this value alive as long as the app runs).
    First(FirstInstance),
    /// Another launch holds the folder; its window was asked to come to the front, unless
    /// that launch could not be reached (why, then).
    AlreadyRunning { unreachable: Option<std::io::Error> },
}

pub struct FirstInstance {
    _lock: std::fs::File,
    socket: PathBuf,
}

/// What a second launch sends.
const FOCUS: &str = "focus";
/// The most the listener reads from one caller.
const MAX_LINE: u64 = 64;
/// How long the listener waits for a caller's line.
pub const READ_TIMEOUT: Duration = Duration::from_millis(500);
/// The longest socket path bound in the data folder (a Unix socket's path holds 107 bytes).
const MAX_SOCKET_PATH: usize = 100;

/// Where the socket for `data_dir` goes: in it, or, if that path is too long for a socket, in
/// the runtime folder (else the temporary folder) under a name made from the data folder.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    let inside = data_dir.join("umwelt.sock");
    if inside.as_os_str().len() <= MAX_SOCKET_PATH {
        return inside;
    }
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data_dir.hash(&mut h);
    let dir = dirs::runtime_dir().unwrap_or_else(std::env::temp_dir);
    dir.join(format!("umwelt-{:016x}.sock", h.finish()))
}

/// How long a second launch tries to reach the first (which may still be starting).
const FOCUS_WAIT: Duration = Duration::from_secs(10);

/// Take the folder, or hand over to the launch that has it.
pub fn claim(data_dir: &Path) -> std::io::Result<Instance> {
    claim_waiting(data_dir, FOCUS_WAIT)
}

fn claim_waiting(data_dir: &Path, wait: Duration) -> std::io::Result<Instance> {
    umwelt::paths::private_dir(data_dir).map_err(std::io::Error::other)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(data_dir.join("umwelt.lock"))?;
    let socket = socket_path(data_dir);
    match lock.try_lock() {
        Ok(()) => Ok(Instance::First(FirstInstance {
            _lock: lock,
            socket,
        })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(Instance::AlreadyRunning {
            unreachable: ask_to_focus(&socket, wait).err(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The first launch may still be starting (its socket not bound yet): try for a few seconds.
#[cfg(unix)]
fn ask_to_focus(socket: &Path, wait: Duration) -> std::io::Result<()> {
    let t0 = Instant::now();
    loop {
        match std::os::unix::net::UnixStream::connect(socket) {
            Ok(mut s) => return writeln!(s, "{FOCUS}"),
            Err(e) if t0.elapsed() > wait => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

#[cfg(not(unix))]
fn ask_to_focus(_socket: &Path, _wait: Duration) -> std::io::Result<()> {
    Ok(())
}

/// What a caller asks, one short line read within [`READ_TIMEOUT`] in all: a caller that says
/// nothing, drips a byte at a time or floods holds the listener that long at most.
#[cfg(unix)]
fn read_request(mut stream: std::os::unix::net::UnixStream) -> Option<String> {
    let until = Instant::now() + READ_TIMEOUT;
    let mut line = Vec::new();
    let mut byte = [0u8; 16];
    while (line.len() as u64) < MAX_LINE && !line.contains(&b'\n') {
        let left = until.checked_duration_since(Instant::now())?;
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return None;
        }
        match stream.read(&mut byte) {
            Ok(0) => break,
            Ok(n) => line.extend_from_slice(&byte[..n]),
            Err(_) => return None,
        }
    }
    let line = String::from_utf8(line).ok()?;
    Some(line.lines().next().unwrap_or("").trim().to_string())
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
        std::fs::set_permissions(&self.socket, std::fs::Permissions::from_mode(0o600))?;
        std::thread::Builder::new()
            .name("umwelt-instance".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    if read_request(stream).as_deref() == Some(FOCUS) {
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

    /// The first launch on `dir`, listening, and how many times it was asked to focus.
    fn listening(dir: &Path) -> (FirstInstance, Arc<AtomicUsize>) {
        let Instance::First(first) = claim(dir).unwrap() else {
            panic!("the first launch must get the folder");
        };
        let focused = Arc::new(AtomicUsize::new(0));
        let f = focused.clone();
        first
            .listen(move || {
                f.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        (first, focused)
    }

    #[test]
    fn a_second_launch_on_the_same_folder_asks_the_first_to_focus_and_another_folder_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let (first, focused) = listening(dir.path());
        // A caller that connects and says nothing, and one that sends a flood, delay nobody
        // for long.
        let _silent = std::os::unix::net::UnixStream::connect(socket_path(dir.path())).unwrap();
        let mut flood = std::os::unix::net::UnixStream::connect(socket_path(dir.path())).unwrap();
        let _ = flood.write_all(&[b'x'; 4096]);
        assert!(matches!(
            claim(dir.path()).unwrap(),
            Instance::AlreadyRunning { unreachable: None }
        ));
        assert!(matches!(
            claim(dir.path()).unwrap(),
            Instance::AlreadyRunning { unreachable: None }
        ));
        let t0 = Instant::now();
        while focused.load(Ordering::SeqCst) < 2 && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(focused.load(Ordering::SeqCst), 2);
        assert!(t0.elapsed() < READ_TIMEOUT * 4, "{:?}", t0.elapsed());
        let mode = std::fs::metadata(socket_path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
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

    #[test]
    fn a_caller_that_drips_its_bytes_holds_the_listener_no_longer_than_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let (_first, focused) = listening(dir.path());
        // One byte every 100 ms: 64 of them take 6.4 s, each read well inside a read timeout.
        let mut drip = std::os::unix::net::UnixStream::connect(socket_path(dir.path())).unwrap();
        let dripping = std::thread::spawn(move || {
            for _ in 0..64 {
                if drip.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        let t0 = Instant::now();
        assert!(matches!(
            claim(dir.path()).unwrap(),
            Instance::AlreadyRunning { unreachable: None }
        ));
        while focused.load(Ordering::SeqCst) < 1 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(focused.load(Ordering::SeqCst), 1);
        assert!(
            t0.elapsed() < READ_TIMEOUT * 4,
            "waited {:?} behind a dripping caller",
            t0.elapsed()
        );
        dripping.join().unwrap();
    }

    #[test]
    fn a_data_folder_too_long_for_a_socket_still_keeps_a_second_launch_out() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir
            .path()
            .join("a-folder-name-that-is-long-enough".repeat(4));
        assert!(deep.join("umwelt.sock").as_os_str().len() > MAX_SOCKET_PATH);
        let Instance::First(first) = claim(&deep).unwrap() else {
            panic!("the first launch must get the folder");
        };
        first.listen(|| {}).unwrap();
        assert!(matches!(
            claim(&deep).unwrap(),
            Instance::AlreadyRunning { unreachable: None }
        ));
        // Even a first launch that never listens keeps the folder.
        let other = dir.path().join("other");
        let Instance::First(_quiet) = claim(&other).unwrap() else {
            panic!("the first launch must get the folder");
        };
        assert!(matches!(
            claim_waiting(&other, Duration::from_millis(300)).unwrap(),
            Instance::AlreadyRunning {
                unreachable: Some(_)
            }
        ));
    }
}
