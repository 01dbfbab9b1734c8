//! The MCP server: rmcp's `ServerHandler` over the tools of `tools.rs` and the newest memories as
//! resources. Each call reads whether agents may write (the `--read-only` flag, then Settings →
//! Agents, read again at every call, so the user's switch takes effect at once) and runs on a
//! blocking thread; every refusal becomes a JSON-RPC error that says what to do, and nothing a
//! client sends stops the server.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

use super::tools::{self, Caller, Refusal};
use crate::settings::Settings;
use crate::store::{Store, DEFAULT_SCOPE};

/// How many of the newest memories `resources/list` gives.
pub const NEWEST: usize = 50;

/// What the server was started with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Whose memories it serves: the user's, [`DEFAULT_SCOPE`] (the harness serves its corpus's).
    pub scope: String,
    /// `--read-only`: the writing tools are neither listed nor run, whatever the settings say.
    pub read_only: bool,
    /// The settings file whose `agents_may_write` (Settings → Agents) allows the writing tools;
    /// `None`: they are allowed unless `read_only`.
    pub settings: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            scope: DEFAULT_SCOPE.into(),
            read_only: false,
            settings: None,
        }
    }
}

impl Options {
    /// Whether the writing tools may run now: not `--read-only`, and the user has turned on
    /// "Let agents write" (a settings file that is missing, unreadable or damaged says no).
    pub fn may_write(&self) -> bool {
        if self.read_only {
            return false;
        }
        let Some(path) = &self.settings else {
            return true;
        };
        std::fs::read(path)
            .ok()
            .and_then(|b| Settings::parse(&b))
            .is_some_and(|(s, _)| s.agents_may_write)
    }
}

/// The server one client talks to.
#[derive(Clone)]
pub struct UmweltServer {
    store: Arc<Store>,
    options: Options,
}

impl UmweltServer {
    pub fn new(store: Arc<Store>, options: Options) -> UmweltServer {
        UmweltServer { store, options }
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        let info = context.peer.peer_info();
        Caller {
            scope: self.options.scope.clone(),
            may_write: self.options.may_write(),
            source: tools::agent_source(info.as_ref().map(|i| i.client_info.name.as_str())),
        }
    }

    /// Run `f` on a blocking thread (the store's calls wait on SQLite and the model).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(Arc<Store>) -> Result<T, Refusal> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || f(store)).await {
            Ok(r) => r.map_err(to_error),
            Err(e) => Err(ErrorData::internal_error(
                format!("the call failed inside Umwelt ({e}); the server goes on, try again"),
                None,
            )),
        }
    }
}

fn to_error(r: Refusal) -> ErrorData {
    match r {
        Refusal::BadRequest(m) => ErrorData::invalid_params(m, None),
        Refusal::Failed(m) => ErrorData::internal_error(m, None),
    }
}

fn describe(spec: &tools::ToolSpec) -> Tool {
    let annotations = ToolAnnotations::with_title(spec.title)
        .read_only(!spec.writes)
        .destructive(spec.name == "forget")
        .idempotent(!spec.writes || spec.name == "forget")
        .open_world(false);
    Tool::new(spec.name, spec.description, Arc::new((spec.schema)()))
        .with_title(spec.title)
        .with_annotations(annotations)
}

const INSTRUCTIONS: &str = "Umwelt is the user's private, offline memory: notes they dictated \
or typed, kept on this machine. Use `search` (words and meaning) or `recall` (meaning) to find \
what the user told it, `get_memory` to read one whole, `list_sessions` for its sessions, and \
`holdings` for its who-holds-what notebook. When writing is allowed, `remember` stores a note \
(marked as yours) and `forget` deletes one: only do either when the user asks.";

impl ServerHandler for UmweltServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("umwelt", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let may_write = self.options.may_write();
        Ok(ListToolsResult::with_all_items(
            tools::TOOLS
                .iter()
                .filter(|t| may_write || !t.writes)
                .map(describe)
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context);
        let name = request.name.to_string();
        let args = request.arguments;
        let value = self
            .blocking(move |store| tools::call(&store, &caller, &name, args))
            .await?;
        Ok(CallToolResult::structured(value).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let scope = self.options.scope.clone();
        let newest = self
            .blocking(move |store| tools::newest(&store, &scope, NEWEST))
            .await?;
        Ok(ListResourcesResult::with_all_items(
            newest
                .iter()
                .map(|m| {
                    Resource::new(
                        format!("{}{}", tools::RESOURCE_PREFIX, m.id),
                        tools::resource_name(m),
                    )
                    .with_mime_type("text/plain")
                    .with_size(m.text.len() as u64)
                })
                .collect(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{}{{id}}", tools::RESOURCE_PREFIX), "memory")
                .with_description("One of the user's memories by its id: its text.")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let wanted = uri.clone();
        let m = self
            .blocking(move |store| tools::resource(&store, &wanted))
            .await
            .map_err(|e| ErrorData::resource_not_found(e.message, None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(m.text, uri)]).into())
    }
}
