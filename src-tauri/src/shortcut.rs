//! The global dictation shortcut (Tauri's global-shortcut plugin): toggle, or push-to-talk
//! (record while held). Registered at start-up and again whenever the settings change.

use std::sync::OnceLock;

use tauri::{AppHandle, Runtime};
use tauri_plugin_global_shortcut::GlobalShortcutExt;

type Register = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Registers the shortcut with the system: bound to the plugin once the app runs (not on the
/// mock runtime of the tests, where registering does nothing).
#[derive(Default)]
pub struct Shortcut(OnceLock<Register>);

impl Shortcut {
    /// Register through `app`'s global-shortcut plugin from now on.
    pub fn bind<R: Runtime>(&self, app: &AppHandle<R>) {
        let app = app.clone();
        // Bound once at start-up; a second bind (there is none) would keep the first.
        let _bound_already = self.0.set(Box::new(move |keys: &str| {
            let gs = app.global_shortcut();
            if let Err(e) = gs.unregister_all() {
                tracing::warn!("the old shortcut could not be unregistered: {e}");
            }
            if keys.is_empty() {
                return Ok(());
            }
            gs.register(keys).map_err(|e| {
                format!(
                    "the shortcut '{keys}' could not be registered ({e}); choose another in Settings"
                )
            })
        }));
    }

    /// Register `keys` (replacing any other; empty: none). A shortcut that cannot be parsed or
    /// is taken by another program is an error for the user; dictation still works from the
    /// Record button.
    pub fn apply(&self, keys: &str) -> Result<(), String> {
        match self.0.get() {
            Some(register) => register(keys.trim()),
            None => Ok(()),
        }
    }
}
