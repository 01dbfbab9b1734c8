//! What an agent's MCP client needs to start Umwelt's server: the command, its arguments and,
//! when this Umwelt keeps its data somewhere other than the default, the environment that
//! points there. Settings → Agents shows it as the JSON most desktop clients take
//! (`{"mcpServers": {"umwelt": {...}}}`).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// How a client starts `umwelt-cli mcp`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct ClientSetup {
    /// The program: `umwelt-cli` beside this one (where the package installs it), else by name.
    pub command: String,
    pub args: Vec<String>,
    /// `UMWELT_DATA_DIR`, when this process was started with one.
    pub data_dir: Option<String>,
    /// The whole entry, as JSON to paste into a client's configuration.
    pub snippet: String,
}

/// The setup for the `umwelt-cli` found beside `exe` (the running program), or on the PATH.
pub fn client_setup(exe: Option<&Path>) -> ClientSetup {
    let beside = exe
        .and_then(Path::parent)
        .map(|dir| dir.join("umwelt-cli"))
        .filter(|p| p.is_file());
    let command = beside
        .unwrap_or_else(|| PathBuf::from("umwelt-cli"))
        .to_string_lossy()
        .into_owned();
    let args = vec!["mcp".to_string()];
    let data_dir = std::env::var_os("UMWELT_DATA_DIR").map(|d| d.to_string_lossy().into_owned());
    let mut server = serde_json::json!({ "command": command, "args": args });
    if let Some(d) = &data_dir {
        server["env"] = serde_json::json!({ "UMWELT_DATA_DIR": d });
    }
    let snippet = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "umwelt": server }
    }))
    .unwrap_or_default();
    ClientSetup {
        command,
        args,
        data_dir,
        snippet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snippet_names_the_cli_beside_the_app() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("umwelt-cli"), b"").unwrap();
        let s = client_setup(Some(&dir.path().join("umwelt")));
        assert_eq!(s.command, dir.path().join("umwelt-cli").to_string_lossy());
        let v: serde_json::Value = serde_json::from_str(&s.snippet).unwrap();
        assert_eq!(
            v["mcpServers"]["umwelt"]["args"],
            serde_json::json!(["mcp"])
        );
        assert_eq!(
            v["mcpServers"]["umwelt"]["command"],
            serde_json::json!(s.command)
        );
        // Without one beside it, by name from the PATH.
        let none = client_setup(Some(&dir.path().join("sub").join("umwelt")));
        assert_eq!(none.command, "umwelt-cli");
    }
}
