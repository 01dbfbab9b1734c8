//! The desktop around Umwelt's window, where a dictation may go after it stops (Settings →
//! After dictation): whether the window has the focus (then nothing is typed into Umwelt
//! itself), the app that has it (typed into through [`umwelt::typing`]), the clipboard this
//! process holds for the user, and the desktop's notifications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use umwelt::clipboard::Clipboard;
use umwelt::speech::Elsewhere;
use umwelt::typing::Method;

/// How long the notification server may take to answer.
const NOTIFY_WITHIN: Duration = Duration::from_secs(2);

/// The one owner of the clipboard the app sets, and the window's focus as its events say it.
#[derive(Default)]
pub struct Desktop {
    focused: AtomicBool,
    clipboard: Clipboard,
}

impl Desktop {
    /// The window gained (`true`) or lost the keyboard focus.
    pub fn set_focused(&self, focused: bool) {
        self.focused.store(focused, Ordering::Relaxed);
    }

    /// A notification on the desktop (org.freedesktop.Notifications over the session bus): the
    /// user is in another app. A desktop without a notification server gets a line in the log.
    pub fn notify(&self, summary: &str, body: &str) {
        if let Err(e) = send_notification(summary, body) {
            tracing::warn!("the desktop notification was not shown ({e}): {summary}: {body}");
        }
    }
}

impl Elsewhere for Desktop {
    fn umwelt_has_focus(&self) -> bool {
        // The window's own focus events, and (on X11) the X server's word: an event missed
        // before the app was ready must not have Umwelt type into itself.
        self.focused.load(Ordering::Relaxed)
            || umwelt::typing::focus_is_this_process().unwrap_or(false)
    }

    fn type_text(&self, text: &str) -> umwelt::Result<Method> {
        umwelt::typing::type_text(text)
    }

    fn copy(&self, text: &str) -> umwelt::Result<()> {
        self.clipboard.put(text)
    }
}

fn send_notification(summary: &str, body: &str) -> Result<u32, dbus::Error> {
    use dbus::arg::PropMap;
    let conn = dbus::blocking::Connection::new_session()?;
    let proxy = conn.with_proxy(
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
        NOTIFY_WITHIN,
    );
    let actions: Vec<&str> = Vec::new();
    let hints: PropMap = HashMap::new();
    // app name, replaces id, icon, summary, body, actions, hints, timeout (-1: the server's).
    let (id,): (u32,) = proxy.method_call(
        "org.freedesktop.Notifications",
        "Notify",
        (
            "Umwelt", 0u32, "umwelt", summary, body, actions, hints, -1i32,
        ),
    )?;
    Ok(id)
}
