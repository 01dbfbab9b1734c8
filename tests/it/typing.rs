//! Dictation into another app: a real X server (Xvfb), a real X11 application (`xterm` running
//! `cat > out.txt`) focused with xdotool, and `umwelt-cli type` / `record --type` typing into
//! it through XTest. The test reads what arrived in the file: the words, accents and an emoji.
//! And with no window focused, or no graphical session, nothing is typed and the dictation is
//! still kept as a memory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// An X server of its own and an xterm writing what it is typed into a file.
struct Screen {
    display: String,
    xvfb: Child,
    /// Xvfb's standard output, kept open: a write to a closed pipe would end it (SIGPIPE).
    _xvfb_out: std::io::BufReader<std::process::ChildStdout>,
    xterm: Option<Child>,
    out: PathBuf,
}

impl Screen {
    fn start(dir: &Path) -> Screen {
        // Xvfb chooses a free display and says which (`-displayfd`): tests run side by side.
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("xvfb.log")).unwrap())
            .spawn()
            .expect("Xvfb is installed by scripts/setup.sh --test");
        let mut out = std::io::BufReader::new(xvfb.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        let display = format!(":{}", line.trim());
        let mut screen = Screen {
            display,
            xvfb,
            _xvfb_out: out,
            xterm: None,
            out: dir.join("out.txt"),
        };
        screen.wait_for(
            |s| s.xdotool(&["getmouselocation"]).is_some(),
            "Xvfb to start",
        );
        let log = dir.join("xterm.log");
        screen.xterm = Some(screen.xterm(&log));
        let until = Instant::now() + Duration::from_secs(90);
        while !screen
            .xdotool(&["search", "--onlyvisible", "--class", "xterm"])
            .is_some_and(|w| !w.trim().is_empty())
        {
            let exited = screen.xterm.as_mut().unwrap().try_wait().unwrap();
            assert!(
                Instant::now() < until,
                "xterm's window did not appear (xterm {exited:?}): {}\nXvfb ({:?}): {}",
                std::fs::read_to_string(&log).unwrap_or_default(),
                screen.xvfb.try_wait(),
                std::fs::read_to_string(dir.join("xvfb.log")).unwrap_or_default()
            );
            if exited.is_some() {
                // It could not open the display at that moment (seen once under the whole
                // suite's load): start it again.
                screen.xterm = Some(screen.xterm(&log));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Mapped (visible) before it can take the focus; under load that can lag its creation.
        let window = screen
            .xdotool(&["search", "--onlyvisible", "--class", "xterm"])
            .unwrap();
        let window = window.lines().next().unwrap().to_string();
        screen.wait_for(
            |s| {
                s.xdotool(&["windowfocus", "--sync", &window]).is_some()
                    && s.xdotool(&["getwindowfocus"])
                        .is_some_and(|f| f.trim() == window)
            },
            "xterm to take the focus",
        );
        screen
    }

    fn xterm(&self, log: &Path) -> Child {
        Command::new("xterm")
            .env("DISPLAY", &self.display)
            .env("LC_ALL", "C.UTF-8")
            .arg("-e")
            .arg(format!("cat > '{}'", self.out.display()))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("xterm is installed by scripts/setup.sh --test")
    }

    fn xdotool(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("xdotool")
            .env("DISPLAY", &self.display)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn wait_for(&self, ready: impl Fn(&Screen) -> bool, what: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        while !ready(self) {
            assert!(Instant::now() < until, "waited 60 s for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn cli(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_umwelt-cli"));
        c.env("DISPLAY", &self.display)
            .env_remove("WAYLAND_DISPLAY");
        c
    }

    /// What has arrived in the file once a line is ended (cat writes a line when Return comes).
    fn arrived(&self) -> String {
        self.xdotool(&["key", "Return"]).expect("Return is typed");
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.out).unwrap_or_default();
            if text.ends_with('\n') || Instant::now() > until {
                return text;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if let Some(x) = &mut self.xterm {
            let _ = x.kill();
            let _ = x.wait();
        }
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

#[test]
fn a_text_with_accents_and_an_emoji_lands_in_another_apps_window() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let screen = Screen::start(dir.path());
    let text = "Grüße aus Köln, café crème — naïve 😀 ok";
    let out = screen.cli().args(["type", text]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(screen.arrived(), format!("{text}\n"));
}

#[test]
fn a_dictation_from_the_microphone_is_kept_and_typed_into_the_focused_app() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let raw = common::espeak_raw(
        "buy fresh bread and milk on the way home",
        dir.path(),
        0.2,
        0.3,
    );
    common::file_microphone(dir.path(), &raw);
    let screen = Screen::start(dir.path());
    let db = dir.path().join("m.sqlite");
    let out = screen
        .cli()
        .env("XDG_CONFIG_HOME", dir.path())
        .arg("--db")
        .arg(&db)
        .args(["record", "--seconds", "3", "--type"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let typed = screen.arrived();
    let words = common::words(&typed);
    for w in ["fresh", "milk", "home"] {
        assert!(words.iter().any(|x| x == w), "'{w}' not typed: {typed:?}");
    }
    // Kept as a memory too, with the same text that was typed.
    let store = umwelt::Store::open(&db).unwrap();
    let kept = store.list("me", 5, None).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(format!("{}\n", kept[0].text), typed);
}

#[test]
fn with_no_window_to_type_into_nothing_is_typed_and_the_dictation_is_kept() {
    let _g = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let raw = common::espeak_raw("call the dentist on monday", dir.path(), 0.2, 0.3);
    common::file_microphone(dir.path(), &raw);
    let db = dir.path().join("m.sqlite");
    // No graphical session at all.
    let out = Command::new(env!("CARGO_BIN_EXE_umwelt-cli"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("XDG_CONFIG_HOME", dir.path())
        .arg("--db")
        .arg(&db)
        .args(["record", "--seconds", "3", "--type"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no graphical session"), "{err}");
    assert!(err.contains("kept as memory"), "{err}");
    let store = umwelt::Store::open(&db).unwrap();
    let kept = store.list("me", 5, None).unwrap();
    assert_eq!(kept.len(), 1, "the dictation is kept");
    assert!(common::words(&kept[0].text).contains(&"dentist".to_string()));

    // A session, but the focused window has closed: the focus falls back to the desktop.
    let mut screen = Screen::start(dir.path());
    let mut xterm = screen.xterm.take().unwrap();
    xterm.kill().unwrap();
    xterm.wait().unwrap();
    let out = screen
        .cli()
        .args(["type", "nothing should arrive"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no window has the keyboard focus"), "{err}");
}
