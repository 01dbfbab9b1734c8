//! The key in the real system keyring: gnome-keyring-daemon on a D-Bus session bus of the
//! test's own, unlocked with a password as a login unlocks it; and a bus with no keyring at all,
//! where every call says so, in time, instead of hanging.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use umwelt::embed::LazyEmbedder;
use umwelt::keyring::{KeyStore, SystemKeyring, ANSWER_WITHIN};
use umwelt::store::cipher::Key;
use umwelt::store::DEFAULT_SCOPE;
use umwelt::Store;

use crate::common;

/// A session bus with no activatable services: only what a test starts on it is there.
pub(crate) struct Bus {
    daemons: Vec<Child>,
    pub(crate) address: String,
}

impl Drop for Bus {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

pub(crate) fn bus(dir: &Path) -> Bus {
    let conf = dir.join("bus.conf");
    std::fs::write(
        &conf,
        format!(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
             \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\
             <busconfig><type>session</type><listen>unix:dir={}</listen>\
             <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
             <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
            dir.display()
        ),
    )
    .unwrap();
    let mut daemon = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", conf.display()))
        .args(["--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon (package dbus) runs");
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    Bus {
        daemons: vec![daemon],
        address: line.trim().to_string(),
    }
}

/// Start gnome-keyring-daemon's Secret Service on `bus`, its keyrings in `dir`, the login
/// keyring unlocked (made, the first time) with `password`.
pub(crate) fn unlocked_keyring(bus: &mut Bus, dir: &Path, password: &str) {
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut d = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_RUNTIME_DIR", &run)
        .env("HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gnome-keyring-daemon (package gnome-keyring) runs");
    d.stdin
        .take()
        .unwrap()
        .write_all(password.as_bytes())
        .unwrap();
    bus.daemons.push(d);
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let out = Command::new("dbus-send")
            .arg(format!("--bus={}", bus.address))
            .args([
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
            ])
            .args([
                "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.secrets",
            ])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
            return;
        }
        assert!(
            Instant::now() < until,
            "the keyring did not come up on the bus"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A bus of the test's own with an unlocked keyring on it, this process's keyring calls going
/// to it (the variable is read at each connect). For a test in a process of its own.
pub(crate) fn session_with_keyring(dir: &Path) -> Bus {
    let mut bus = bus(dir);
    unlocked_keyring(&mut bus, dir, "login password");
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    bus
}

#[test]
fn the_key_is_kept_in_the_real_keyring_one_entry_per_memory_file() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut bus = session_with_keyring(dir.path());

    let db = dir.path().join("m.sqlite");
    let ring = SystemKeyring::for_file(&db);
    assert!(ring.get().unwrap().is_none(), "a new file has no key yet");
    let key = Key::random().unwrap();
    ring.put(&key).unwrap();
    let back = ring.get().unwrap().expect("the key kept");
    assert_eq!(back.random_bytes(), key.random_bytes());
    // Another memory file, another entry; the same file by another path, the same entry.
    assert!(SystemKeyring::for_file(&dir.path().join("other.sqlite"))
        .get()
        .unwrap()
        .is_none());
    let same = dir.path().join(".").join("m.sqlite");
    assert!(SystemKeyring::for_file(&same).get().unwrap().is_some());

    // The key from the keyring opens the file it made, across a restart of the keyring.
    let store = Store::open_keyed(&db, LazyEmbedder::new().into(), Some(&back)).unwrap();
    let v = vec![0.5f32; umwelt::embed::EMBED_DIM];
    let m = umwelt::store::NewMemory {
        scope: DEFAULT_SCOPE,
        session: "s",
        text: "kept under the keyring's key",
        ..Default::default()
    };
    store.remember_with_vector(&m, &v).unwrap();
    drop(store);
    for d in bus.daemons.drain(1..) {
        let mut d = d;
        let _ = d.kill();
        let _ = d.wait();
    }
    unlocked_keyring(&mut bus, dir.path(), "login password");
    let again = SystemKeyring::for_file(&db)
        .get()
        .unwrap()
        .expect("kept on disk");
    let store = Store::open_keyed(&db, LazyEmbedder::new().into(), Some(&again)).unwrap();
    assert_eq!(store.count(DEFAULT_SCOPE).unwrap(), 1);
    drop(store);

    // The keyring's file holds the key encrypted: its bytes are nowhere in it.
    let raw = key.random_bytes().unwrap();
    for f in std::fs::read_dir(dir.path().join("data/keyrings")).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(raw.len()).any(|w| w == raw),
            "the key is in the clear"
        );
    }

    ring.forget().unwrap();
    assert!(ring.get().unwrap().is_none());
    ring.forget().unwrap();
}

#[test]
fn with_no_keyring_on_the_bus_every_call_says_so_in_time() {
    if common::own_process!() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bus = bus(dir.path());
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    let ring = SystemKeyring::for_file(&dir.path().join("m.sqlite"));
    let t0 = Instant::now();
    let e = ring.get().err().expect("no keyring").to_string();
    assert!(e.contains("keyring is not available"), "{e}");
    let e = ring
        .put(&Key::random().unwrap())
        .err()
        .expect("no keyring")
        .to_string();
    assert!(e.contains("keyring is not available"), "{e}");
    assert!(t0.elapsed() < 2 * ANSWER_WITHIN, "took {:?}", t0.elapsed());

    // No session bus at all (a headless start): the same.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    let e = ring.get().err().expect("no bus").to_string();
    assert!(e.contains("keyring is not available"), "{e}");
}
