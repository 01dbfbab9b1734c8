//! The clipboard, where a dictation goes for the user to paste when it cannot be typed into the
//! focused app ([`crate::typing`]).
//!
//! On Linux a clipboard's text is served by the program that set it, for as long as it runs: a
//! [`Clipboard`] is kept for the app's life (the app's `Desktop` manager holds the one), and
//! the text stays pasteable after the window closes only where a clipboard manager takes it.
//! - **X11** (and XWayland): `arboard` over x11rb, in this process.
//! - **Wayland**: Debian's `wl-copy` (wl-clipboard), which serves the text from a process of its
//!   own; without it, XWayland's clipboard through `arboard` where there is one, which most
//!   Wayland apps read too.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// This process's hold on the clipboard.
#[derive(Default)]
pub struct Clipboard {
    /// The X11 clipboard, opened on first use and kept: dropping it would end the serving.
    x11: Mutex<Option<arboard::Clipboard>>,
}

impl Clipboard {
    pub fn new() -> Clipboard {
        Clipboard::default()
    }

    /// Put `text` on the clipboard (the one Ctrl+V pastes).
    pub fn put(&self, text: &str) -> Result<()> {
        let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty());
        let x11 = std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty());
        let mut why = Vec::new();
        if wayland {
            match wl_copy(text) {
                Ok(()) => return Ok(()),
                Err(e) => why.push(e),
            }
        }
        if x11 {
            match self.put_x11(text) {
                Ok(()) => return Ok(()),
                Err(e) => why.push(e),
            }
        }
        if why.is_empty() {
            why.push(
                "there is no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set)".into(),
            );
        }
        Err(Error::NotTyped(format!(
            "the clipboard could not be set: {}",
            why.join("; ")
        )))
    }

    fn put_x11(&self, text: &str) -> std::result::Result<(), String> {
        let mut held = self.x11.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_none() {
            *held = Some(
                arboard::Clipboard::new()
                    .map_err(|e| format!("the X server's clipboard could not be opened ({e})"))?,
            );
        }
        let clipboard = held.as_mut().expect("opened above");
        clipboard.set_text(text).map_err(|e| {
            // Opened again next time: the X server may have gone and come back.
            *held = None;
            format!("the X server's clipboard refused the text ({e})")
        })
    }
}

fn wl_copy(text: &str) -> std::result::Result<(), String> {
    // Its own process serves the text after it returns: its output is not waited for.
    let mut child = Command::new("wl-copy")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "the Wayland clipboard needs `wl-copy` (sudo apt install wl-clipboard)".to_string()
            }
            _ => format!("wl-copy could not be started ({e})"),
        })?;
    let wrote = child
        .stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes());
    let status = child.wait().map_err(|e| format!("wl-copy failed ({e})"))?;
    match (wrote, status.success()) {
        (Ok(()), true) => Ok(()),
        (Err(e), _) => Err(format!("wl-copy did not take the text ({e})")),
        (_, false) => Err(format!(
            "this Wayland compositor refused wl-copy ({status})"
        )),
    }
}
