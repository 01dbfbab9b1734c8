//! `mcp`: the memory for the user's own agents, over the Model Context Protocol on stdio.

use std::sync::Arc;

use umwelt::{mcp, paths, Result};

use crate::args::{McpArgs, MemoryFile};
use crate::memory::open;

/// Serve until the client disconnects. Nothing but the protocol goes to stdout; the engine's
/// warnings go to stderr, which MCP clients keep as the server's log.
pub(crate) fn mcp(db: &MemoryFile, a: McpArgs) -> Result<()> {
    let store = Arc::new(open(db)?);
    mcp::serve_stdio(
        store,
        mcp::Options {
            scope: umwelt::store::DEFAULT_SCOPE.into(),
            read_only: a.read_only,
            // Settings → Agents, in the app's data folder (`$UMWELT_DATA_DIR`), read at each call.
            settings: Some(paths::settings_file()),
        },
    )
}
