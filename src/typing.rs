//! Typing a text into the app that has the keyboard focus, as if the user typed it: dictation
//! into any app (`umwelt-cli type`, `record --type`).
//!
//! - **X11**: XTest through `enigo` (its `x11rb` backend, in this process, no helper program).
//!   A character the keyboard layout has no key for (accents on a US layout, emoji) is typed by
//!   binding its keysym to a spare keycode for the moment, which enigo gives back afterwards;
//!   the receiving app turns the keysym into the character, so any Unicode text arrives as
//!   itself in an app that reads keysyms (GTK, Qt, xterm in a UTF-8 locale). Before typing, the
//!   X server is asked which window has the focus: none (or only the desktop's root window), and
//!   nothing is typed. Whether the focused window has a text field, X cannot say.
//! - **Wayland**: the compositor decides. Where it offers the virtual-keyboard protocol
//!   (wlroots compositors: Sway, Hyprland…), Debian's `wtype` types the text; GNOME and KDE
//!   offer no such protocol to ordinary programs, and the error says so (the caller keeps the
//!   text and puts it on the clipboard).
//!
//! Whatever fails is an [`Error::NotTyped`] that says why and what to do: the caller has already
//! kept the text (a draft, a memory), so a failure here loses nothing.

use std::process::{Command, Stdio};

use crate::error::{Error, Result};

/// How a text was typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// XTest key events on the X server (`DISPLAY`).
    XTest,
    /// `wtype`, the Wayland virtual-keyboard protocol.
    Wtype,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::XTest => "X11 key events (XTest)",
            Method::Wtype => "the Wayland virtual keyboard (wtype)",
        }
    }
}

/// Type `text` into the focused window of this graphical session.
pub fn type_text(text: &str) -> Result<Method> {
    if text.is_empty() {
        return Err(Error::InvalidInput("there is no text to type".into()));
    }
    if text.contains('\0') {
        return Err(Error::InvalidInput(
            "the text holds a NUL character, which cannot be typed".into(),
        ));
    }
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty());
    let x11 = std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty());
    if wayland {
        return type_wayland(text);
    }
    if x11 {
        return type_x11(text);
    }
    Err(Error::NotTyped(
        "there is no graphical session here (neither WAYLAND_DISPLAY nor DISPLAY is set), so \
         there is no window to type into"
            .into(),
    ))
}

/// Whether the window with the keyboard focus is one of this process's own: on X11, the
/// `_NET_WM_PID` of the focused window or of a window above it (GTK sets it on each top-level
/// window). `None` where it cannot be told (Wayland, no X server).
pub fn focus_is_this_process() -> Option<bool> {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt};
    if std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let (conn, _) = x11rb::connect(None).ok()?;
    let root = conn.setup().roots.first()?.root;
    let pid = conn
        .intern_atom(true, b"_NET_WM_PID")
        .ok()?
        .reply()
        .ok()?
        .atom;
    let mut window = conn.get_input_focus().ok()?.reply().ok()?.focus;
    // 0 (None), 1 (PointerRoot), the root: no window of anyone's has the focus.
    for _ in 0..64 {
        if pid == 0 || window <= 1 || window == root {
            return Some(false);
        }
        let owner = conn
            .get_property(false, window, pid, AtomEnum::CARDINAL, 0, 1)
            .ok()?
            .reply()
            .ok()?;
        if let Some(owner) = owner.value32().and_then(|mut v| v.next()) {
            return Some(owner == std::process::id());
        }
        window = conn.query_tree(window).ok()?.reply().ok()?.parent;
    }
    Some(false)
}

fn type_x11(text: &str) -> Result<Method> {
    use enigo::{Enigo, Keyboard, Settings};
    let conn = focused_x11_window()?;
    wait_for_modifiers_released(&conn)?;
    let mut enigo = Enigo::new(&Settings::default()).map_err(|e| {
        Error::NotTyped(format!(
            "the X server did not let Umwelt type ({e}); check that DISPLAY names your session"
        ))
    })?;
    enigo
        .text(text)
        .map_err(|e| Error::NotTyped(format!("typing through the X server failed midway ({e})")))?;
    // The keycodes bound for characters off the layout are given back when `enigo` is
    // dropped; let the receiving app read its events first, or it may see them unbound.
    flush_x11(&conn);
    drop(enigo);
    Ok(Method::XTest)
}

/// A connection to the X server once a window has the focus, or the reason there is none to
/// type into.
fn focused_x11_window() -> Result<x11rb::rust_connection::RustConnection> {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::ConnectionExt;
    let (conn, _) = x11rb::connect(None).map_err(|e| {
        Error::NotTyped(format!(
            "the X server named by DISPLAY could not be reached ({e})"
        ))
    })?;
    let root = conn.setup().roots.first().map(|r| r.root);
    let focus = conn
        .get_input_focus()
        .map_err(|e| Error::NotTyped(format!("asking the X server for the focus failed ({e})")))?
        .reply()
        .map_err(|e| Error::NotTyped(format!("asking the X server for the focus failed ({e})")))?
        .focus;
    // 1 is PointerRoot: the keys go to the window under the pointer; none there, none at all.
    let focus = match (focus, root) {
        (1, Some(root)) => conn
            .query_pointer(root)
            .ok()
            .and_then(|c| c.reply().ok())
            .map_or(0, |p| p.child),
        _ => focus,
    };
    let _ = conn.flush();
    // 0 is None: no window has the keyboard; the root window: the desktop has it (the focused
    // window closed and focus fell back to its parent), so keys would reach no app.
    if focus == 0 || Some(focus) == root {
        return Err(Error::NotTyped(
            "no window has the keyboard focus: click into the text field first".into(),
        ));
    }
    Ok(conn)
}

/// Wait (at most [`MODIFIERS_HELD_FOR`]) until no modifier key is held: a dictation stopped
/// with a shortcut (Ctrl+Alt+Space) ends while its keys may still be down, and a letter typed
/// then would reach the app as Ctrl+Alt+letter, a command rather than text.
fn wait_for_modifiers_released(conn: &impl x11rb::connection::Connection) -> Result<()> {
    use x11rb::protocol::xproto::{ConnectionExt, KeyButMask};
    let Some(root) = conn.setup().roots.first().map(|r| r.root) else {
        return Ok(());
    };
    // Caps Lock and Num Lock are states, not keys held; Shift, Ctrl, Alt, Super and AltGr are.
    let held = KeyButMask::SHIFT
        | KeyButMask::CONTROL
        | KeyButMask::MOD1
        | KeyButMask::MOD4
        | KeyButMask::MOD5;
    let until = std::time::Instant::now() + MODIFIERS_HELD_FOR;
    loop {
        let mask = match conn.query_pointer(root).map(|c| c.reply()) {
            Ok(Ok(p)) => p.mask,
            // The state cannot be read: type anyway, as the user asked.
            _ => return Ok(()),
        };
        if !mask.intersects(held) {
            return Ok(());
        }
        if std::time::Instant::now() >= until {
            return Err(Error::NotTyped(
                "a modifier key (Ctrl, Alt, Shift or Super) was still held down, and letters \
                 typed with it would have been commands; let go of the shortcut's keys sooner"
                    .into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long typing waits for the shortcut's keys to be let go.
const MODIFIERS_HELD_FOR: std::time::Duration = std::time::Duration::from_secs(3);

/// A round trip to the X server (the events sent before it have been handled), and a short
/// pause in which the focused app reads them.
fn flush_x11(conn: &impl x11rb::connection::Connection) {
    use x11rb::protocol::xproto::ConnectionExt;
    let _ = conn.get_input_focus().map(|c| c.reply());
    std::thread::sleep(std::time::Duration::from_millis(50));
}

fn type_wayland(text: &str) -> Result<Method> {
    let out = Command::new("wtype")
        .arg("--")
        .arg(text)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(Method::Wtype),
        Ok(o) => Err(Error::NotTyped(format!(
            "this Wayland compositor refused the virtual keyboard ({}); GNOME and KDE do not \
             offer it to other programs: the text is kept in Umwelt, paste it yourself",
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NotTyped(
            "typing on Wayland needs `wtype` (sudo apt install wtype), and a compositor that \
             offers the virtual keyboard (Sway, Hyprland, other wlroots ones)"
                .into(),
        )),
        Err(e) => Err(Error::NotTyped(format!("wtype could not be started ({e})"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_texts_are_refused_before_anything_is_typed() {
        assert!(matches!(type_text(""), Err(Error::InvalidInput(_))));
        assert!(matches!(type_text("a\0b"), Err(Error::InvalidInput(_))));
    }
}
