//! Umwelt for the user's own agents: a Model Context Protocol server (`umwelt-cli mcp`) on the
//! official Rust SDK, `rmcp`, over stdio. It opens the same memory file as the app, at the same
//! time (the store's two-writer guarantees hold: every write transaction begins `IMMEDIATE`).
//!
//! `tools.rs` is what an agent can ask (remember, search, recall, get_memory, list_sessions,
//! holdings, forget), plain code against the store; `server.rs` is the protocol side (rmcp's
//! `ServerHandler`: tools, the newest memories as resources, refusals as JSON-RPC errors);
//! `snippet.rs` what a client's configuration needs to start it (Settings → Agents).

mod server;
mod snippet;
pub mod tools;

use std::sync::Arc;

use rmcp::ServiceExt;

pub use server::{Options, UmweltServer, NEWEST};
pub use snippet::{client_setup, ClientSetup};

use crate::error::{Error, Result};
use crate::store::Store;

/// Serve one client on this process's stdin and stdout until it disconnects. The embedding model
/// and the memory index load in the background at once, so the first question does not wait
/// for them.
pub fn serve_stdio(store: Arc<Store>, options: Options) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::io("starting the MCP server's runtime"))?;
    let served = runtime.block_on(async move {
        let warm = store.clone();
        let scope = options.scope.clone();
        let warming = tokio::task::spawn_blocking(move || {
            // Failures show on the first call that needs the model, with what to do.
            if let Ok(embedder) = warm.embedder().get() {
                let _ = embedder.embed_one("warm up");
            }
            let _ = warm.preload(&scope);
        });
        let service = UmweltServer::new(store, options)
            .serve(rmcp::transport::stdio_pipes())
            .await
            .map_err(|e| {
                Error::InvalidInput(format!(
                    "the MCP client did not complete the handshake ({e}): start umwelt-cli mcp from an MCP client, which speaks first"
                ))
            })?;
        let ended = service.waiting().await;
        warming.abort();
        ended.map_err(|e| {
            Error::InvalidInput(format!("the MCP server stopped unexpectedly: {e}"))
        })?;
        Ok(())
    });
    // A warm-up still loading is not waited for.
    runtime.shutdown_background();
    served
}

/// The environment variable that makes a harness child serve MCP on stdio: the memory file.
pub const SERVE_DB_ENV: &str = "UMWELT_MCP_SERVE_DB";
/// With [`SERVE_DB_ENV`]: whose memories it serves.
pub const SERVE_SCOPE_ENV: &str = "UMWELT_MCP_SERVE_SCOPE";

/// If this process was started by the harness as an MCP server (`bench/scenarios/agents.rs`:
/// the app's dashboard runs the harness too, so the binary may not be `umwelt-cli`), serve and
/// exit; otherwise return at once. Called by [`crate::bench::memory_probe::run_if_asked`].
pub fn serve_if_asked() {
    let Some(db) = std::env::var_os(SERVE_DB_ENV) else {
        return;
    };
    let scope =
        std::env::var(SERVE_SCOPE_ENV).unwrap_or_else(|_| crate::store::DEFAULT_SCOPE.into());
    let served = Store::open(std::path::PathBuf::from(db)).and_then(|store| {
        serve_stdio(
            Arc::new(store),
            Options {
                scope,
                read_only: true,
                settings: None,
            },
        )
    });
    match served {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
