//! How the web view draws. WebKitGTK composites the page with OpenGL. Without a GPU to run it
//! (no render node under `/dev/dri`: a virtual machine, a remote desktop, Xvfb) that OpenGL is
//! software, and every frame of a scrolled list took 50–60 ms on the reference machine against
//! 16 ms drawn without compositing (docs/PERFORMANCE.md, "the memory browser at 100 000"). So
//! where there is no render node, compositing is turned off before the web view starts. A user
//! who sets `WEBKIT_DISABLE_COMPOSITING_MODE` themselves (either way) is obeyed.

use std::path::Path;

const VARIABLE: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether compositing should be turned off: no GPU render node, and the user said nothing.
pub fn should_disable(render_node: bool, user_choice: bool) -> bool {
    !render_node && !user_choice
}

/// Whether the machine has a GPU render node (`/dev/dri/renderD*`).
fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Decide, before any thread starts and before the web view exists (the variable is read by
/// WebKitGTK as it starts; setting it later does nothing, and setting it with other threads
/// running is not safe).
pub fn choose() {
    let user_choice = std::env::var_os(VARIABLE).is_some();
    if should_disable(has_render_node(Path::new("/dev/dri")), user_choice) {
        // SAFETY: called first thing in `run`, while the process has one thread.
        unsafe { std::env::set_var(VARIABLE, "1") };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositing_goes_only_without_a_render_node_and_without_a_user_choice() {
        assert!(should_disable(false, false));
        assert!(!should_disable(true, false));
        assert!(!should_disable(false, true));
        assert!(!should_disable(true, true));
    }

    #[test]
    fn a_render_node_is_found_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(dir.path()));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(!has_render_node(dir.path()));
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
        assert!(!has_render_node(&dir.path().join("missing")));
    }
}
