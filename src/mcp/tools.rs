//! What an agent can ask Umwelt: each tool's name, description, the JSON schema of its arguments
//! (from the argument types below), whether it writes, and the call itself against the
//! [`Store`]. Plain synchronous code: the server (`server.rs`) runs a call on a blocking thread
//! and turns its [`Refusal`] into a JSON-RPC error.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::store::holdings::{Listing, View};
use crate::store::{Filter, Memory, Store, DEFAULT_SCOPE, MAX_K};

/// Hits a `search` or `recall` gives when the agent names no limit.
pub const DEFAULT_LIMIT: usize = 10;
/// Holdings a `holdings` page gives when the agent names no limit.
pub const DEFAULT_PAGE: usize = 50;

/// One tool, as `tools/list` describes it.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// It changes the user's memories: hidden by `--read-only` and by Settings → Agents.
    pub writes: bool,
    /// The JSON schema of its arguments.
    pub schema: fn() -> Map<String, Value>,
}

fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(mut m)) => {
            // Clients want the object schema itself; the draft marker and title are noise.
            m.remove("$schema");
            m.remove("title");
            m
        }
        _ => Map::new(),
    }
}

/// Every tool, in the order `tools/list` gives them.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "remember",
        title: "Remember a note",
        description: "Store a note in the user's Umwelt memory, marked as written by this agent. \
            Returns the new memory's id. Use it for facts the user asked you to remember, not for \
            your own scratch work.",
        writes: true,
        schema: schema_of::<RememberArgs>,
    },
    ToolSpec {
        name: "search",
        title: "Search memories",
        description: "Find the user's memories by words and by meaning together (hybrid search), \
            best first. Each hit has its id, text, creation time, session, source, and why it \
            ranked (exact phrase, keyword rank, meaning rank, similarity, recency). Narrow by \
            session and by time with since/until.",
        writes: false,
        schema: schema_of::<SearchArgs>,
    },
    ToolSpec {
        name: "recall",
        title: "Recall by meaning",
        description: "Find the user's memories closest in meaning to a question, newer ones \
            slightly preferred. Use it for paraphrased questions (\"what did the doctor say about \
            the lab work\").",
        writes: false,
        schema: schema_of::<RecallArgs>,
    },
    ToolSpec {
        name: "get_memory",
        title: "Read one memory",
        description: "The whole memory with this id: text, creation time, session, source, and \
            the earlier texts it had before it was edited.",
        writes: false,
        schema: schema_of::<IdArgs>,
    },
    ToolSpec {
        name: "list_sessions",
        title: "List sessions",
        description: "The user's sessions (named groups of memories; \"\" is the notebook), with \
            how many memories each holds and when it was first and last used.",
        writes: false,
        schema: schema_of::<NoArgs>,
    },
    ToolSpec {
        name: "holdings",
        title: "Who holds what",
        description: "A page of Umwelt's who-holds-what notebook, newest first: what one holder \
            holds (holder), or every holding of a claim about someone or something (about). Pass \
            the page's `next` as cursor for the next page.",
        writes: false,
        schema: schema_of::<HoldingsArgs>,
    },
    ToolSpec {
        name: "forget",
        title: "Forget a memory",
        description: "Delete one of the user's memories (and its recording) for good. Only do \
            this when the user asked for it.",
        writes: true,
        schema: schema_of::<IdArgs>,
    },
];

/// The tool of that name.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    /// The note, as the user would say it (at most 64 KiB).
    text: String,
    /// The session to file it under; the notebook when left out.
    session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for: words, a phrase, or a question.
    query: String,
    /// At most this many hits (1 to 1000, default 10).
    limit: Option<u32>,
    /// Only memories of this session.
    session: Option<String>,
    /// Only memories made at or after this time: an RFC 3339 time
    /// (2026-12-01T09:30:00+01:00) or a date (2026-12-01, midnight UTC).
    since: Option<String>,
    /// Only memories made before this time, written like `since`.
    until: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// The question or topic.
    query: String,
    /// At most this many memories (1 to 1000, default 10).
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IdArgs {
    /// The memory's id, as search, recall or remember gave it.
    id: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HoldingsArgs {
    /// The holder whose holdings to list (give this or `about`).
    holder: Option<String>,
    /// The entity the claims are about (give this or `holder`).
    about: Option<String>,
    /// At most this many holdings (default 50).
    limit: Option<u32>,
    /// The `next` of the page before.
    cursor: Option<String>,
}

/// Why a call was not carried out, as the JSON-RPC error it becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The request itself is wrong (a missing or mistyped argument, an id that does not exist):
    /// `invalid params`.
    BadRequest(String),
    /// Umwelt failed (the database, a model): `internal error`.
    Failed(String),
}

impl Refusal {
    pub fn message(&self) -> &str {
        match self {
            Refusal::BadRequest(m) | Refusal::Failed(m) => m,
        }
    }
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        match e {
            Error::InvalidInput(_) | Error::NotFound(_) => Refusal::BadRequest(e.to_string()),
            e => Refusal::Failed(e.to_string()),
        }
    }
}

/// What a call may do, fixed for it when it starts.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Whose memories it reads and writes: the user's ([`DEFAULT_SCOPE`]; the harness serves its
    /// corpus's).
    pub scope: String,
    /// Whether writing tools may run (neither `--read-only` nor Settings → Agents said no).
    pub may_write: bool,
    /// The source its memories get: `agent: NAME`, from the client's `initialize`.
    pub source: String,
}

/// The source of what an agent that introduced itself as `name` writes: `agent: NAME`, the
/// name without control characters and at most 64 characters; `agent: unknown` without one.
pub fn agent_source(name: Option<&str>) -> String {
    let clean: String = name
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(64)
        .collect();
    let clean = clean.trim();
    format!(
        "agent: {}",
        if clean.is_empty() { "unknown" } else { clean }
    )
}

/// Run tool `name` with `args` (the call's `arguments` object, or none).
pub fn call(
    store: &Arc<Store>,
    caller: &Caller,
    name: &str,
    args: Option<Map<String, Value>>,
) -> Result<Value, Refusal> {
    let Some(spec) = tool(name) else {
        let names: Vec<&str> = TOOLS
            .iter()
            .filter(|t| caller.may_write || !t.writes)
            .map(|t| t.name)
            .collect();
        return Err(Refusal::BadRequest(format!(
            "there is no tool '{}': the tools are {}",
            clip(name),
            names.join(", ")
        )));
    };
    if spec.writes && !caller.may_write {
        return Err(Refusal::BadRequest(format!(
            "'{name}' changes the user's memories, and writing is turned off for agents: the \
             server runs with --read-only, or the user has not turned on 'Let agents write' in \
             Umwelt's Settings → Agents"
        )));
    }
    let args = Value::Object(args.unwrap_or_default());
    match name {
        "remember" => remember(store, caller, parse(name, args)?),
        "search" => search(store, caller, parse(name, args)?),
        "recall" => recall(store, caller, parse(name, args)?),
        "get_memory" => get_memory(store, parse(name, args)?),
        "list_sessions" => {
            parse::<NoArgs>(name, args)?;
            Ok(json!({ "sessions": store.sessions(&caller.scope)? }))
        }
        "holdings" => holdings(store, parse(name, args)?),
        "forget" => forget(store, caller, parse(name, args)?),
        _ => unreachable!("every tool in TOOLS is dispatched"),
    }
}

/// A name from a request, cut to a length that fits in a message.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(80).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, Refusal> {
    serde_json::from_value(args).map_err(|e| {
        Refusal::BadRequest(format!(
            "the arguments of '{tool}' do not fit its schema: {e}"
        ))
    })
}

fn limit(limit: Option<u32>, default: usize) -> Result<usize, Refusal> {
    let k = limit.map_or(default, |l| l as usize);
    if k == 0 || k > MAX_K {
        return Err(Refusal::BadRequest(format!(
            "limit must be between 1 and {MAX_K}, not {k}"
        )));
    }
    Ok(k)
}

/// A time an agent wrote: RFC 3339, or a date (midnight UTC); Unix ms.
fn parse_time(field: &str, text: &str) -> Result<i64, Refusal> {
    let t = text.trim();
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(t) {
        return Ok(at.timestamp_millis());
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        if let Some(midnight) = day.and_hms_opt(0, 0, 0) {
            return Ok(midnight.and_utc().timestamp_millis());
        }
    }
    Err(Refusal::BadRequest(format!(
        "{field} '{}' is not a time: write it as RFC 3339 (2026-12-01T09:30:00Z) or as a date \
         (2026-12-01)",
        clip(t)
    )))
}

/// A time as RFC 3339 in UTC, to the millisecond.
fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// A memory as an agent sees it.
#[derive(Serialize)]
struct AgentMemory<'a> {
    id: i64,
    text: &'a str,
    /// RFC 3339, UTC.
    created: String,
    created_ms: i64,
    session: &'a str,
    source: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder: Option<&'a str>,
}

fn agent_memory(m: &Memory) -> AgentMemory<'_> {
    AgentMemory {
        id: m.id,
        text: &m.text,
        created: rfc3339(m.created_at),
        created_ms: m.created_at,
        session: &m.session,
        source: &m.source,
        holder: (m.scope != DEFAULT_SCOPE).then_some(m.scope.as_str()),
    }
}

fn remember(store: &Arc<Store>, caller: &Caller, a: RememberArgs) -> Result<Value, Refusal> {
    let id = store.remember_new(&crate::store::NewMemory {
        scope: &caller.scope,
        session: a.session.as_deref().unwrap_or(""),
        text: &a.text,
        source: Some(&caller.source),
        ..Default::default()
    })?;
    Ok(json!({ "id": id }))
}

fn search(store: &Arc<Store>, caller: &Caller, a: SearchArgs) -> Result<Value, Refusal> {
    let k = limit(a.limit, DEFAULT_LIMIT)?;
    let filter = Filter {
        session: a.session,
        source: None,
        from: a
            .since
            .as_deref()
            .map(|t| parse_time("since", t))
            .transpose()?,
        to: a
            .until
            .as_deref()
            .map(|t| parse_time("until", t))
            .transpose()?,
    };
    let hits = store.search_in(&a.query, &caller.scope, &filter, k)?;
    let hits = hits
        .iter()
        .map(|h| hit(&h.memory, h.score, &h.similar, json!({ "why": h.why })));
    Ok(json!({ "hits": hits.collect::<Vec<_>>() }))
}

fn recall(store: &Arc<Store>, caller: &Caller, a: RecallArgs) -> Result<Value, Refusal> {
    let k = limit(a.limit, DEFAULT_LIMIT)?;
    let hits = store.recall(&a.query, &caller.scope, None, k)?;
    let hits = hits.iter().map(|h| {
        let parts = json!({ "similarity": h.similarity, "recency": h.recency });
        hit(&h.memory, h.score, &h.similar, parts)
    });
    Ok(json!({ "hits": hits.collect::<Vec<_>>() }))
}

/// A search or recall hit as an agent sees it: the memory, its score, the ids of its near-copies,
/// and `parts` (why it ranked) beside them.
fn hit(memory: &Memory, score: f32, similar: &[Memory], parts: Value) -> Value {
    let mut v = json!({
        "memory": agent_memory(memory),
        "score": score,
        "similar": similar.iter().map(|m| m.id).collect::<Vec<_>>(),
    });
    if let (Value::Object(v), Value::Object(parts)) = (&mut v, parts) {
        v.extend(parts);
    }
    v
}

/// The memory with this id, or a request error that says so.
fn memory(store: &Arc<Store>, id: i64) -> Result<Memory, Refusal> {
    store.get(id).map_err(|e| match e {
        Error::NotFound(_) => Refusal::BadRequest(format!("there is no memory with id {id}")),
        e => e.into(),
    })
}

fn get_memory(store: &Arc<Store>, a: IdArgs) -> Result<Value, Refusal> {
    let m = memory(store, a.id)?;
    let versions: Vec<Value> = store
        .versions(m.id)?
        .iter()
        .map(|v| json!({ "text": v.text, "replaced": rfc3339(v.edited_at) }))
        .collect();
    Ok(json!({ "memory": agent_memory(&m), "earlier_texts": versions }))
}

fn holdings(store: &Arc<Store>, a: HoldingsArgs) -> Result<Value, Refusal> {
    let listing =
        match (a.holder, a.about) {
            (Some(h), None) => Listing::Holder(store.holder(&h)?),
            (None, Some(e)) => Listing::About(e),
            _ => return Err(Refusal::BadRequest(
                "give either 'holder' (what one holder holds) or 'about' (the holdings about an \
                 entity), not both or neither"
                    .into(),
            )),
        };
    let page = store.holdings(
        &listing,
        &View::main(),
        a.limit.map_or(DEFAULT_PAGE, |l| l as usize),
        a.cursor.as_deref(),
    )?;
    serde_json::to_value(&page).map_err(|e| Refusal::Failed(e.to_string()))
}

fn forget(store: &Arc<Store>, caller: &Caller, a: IdArgs) -> Result<Value, Refusal> {
    let m = memory(store, a.id)?;
    if m.scope != caller.scope {
        return Err(Refusal::BadRequest(format!(
            "memory {} is a claim of the holder '{}' in the who-holds-what notebook, not one of \
             the user's own memories: agents may forget only the user's memories",
            m.id, m.scope
        )));
    }
    store.delete(m.id)?;
    Ok(json!({ "forgotten": m.id }))
}

/// The newest memories, for `resources/list`.
pub fn newest(store: &Arc<Store>, scope: &str, n: usize) -> Result<Vec<Memory>, Refusal> {
    Ok(store.list(scope, n, None)?)
}

/// The memory a resource URI names (`umwelt://memory/ID`).
pub fn resource(store: &Arc<Store>, uri: &str) -> Result<Memory, Refusal> {
    let id = uri
        .strip_prefix(RESOURCE_PREFIX)
        .and_then(|id| id.parse::<i64>().ok())
        .ok_or_else(|| {
            Refusal::BadRequest(format!(
                "'{}' is not one of Umwelt's resources: they are {RESOURCE_PREFIX}ID",
                clip(uri)
            ))
        })?;
    memory(store, id)
}

/// What every memory resource's URI starts with.
pub const RESOURCE_PREFIX: &str = "umwelt://memory/";

/// A resource's short name: the memory's first words.
pub fn resource_name(m: &Memory) -> String {
    let first: String = m.text.chars().take(60).collect();
    if first.len() < m.text.len() {
        format!("{first}…")
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_sources_are_clean_and_short() {
        assert_eq!(
            agent_source(Some("claude-desktop")),
            "agent: claude-desktop"
        );
        assert_eq!(agent_source(Some("  ")), "agent: unknown");
        assert_eq!(agent_source(None), "agent: unknown");
        assert_eq!(agent_source(Some("a\nb\u{7}c")), "agent: abc");
        assert_eq!(
            agent_source(Some(&"x".repeat(500))).len(),
            "agent: ".len() + 64
        );
    }

    #[test]
    fn times_are_rfc3339_or_dates() {
        assert_eq!(parse_time("since", "1970-01-02").unwrap(), 86_400_000);
        assert_eq!(parse_time("since", "1970-01-01T01:00:00+01:00").unwrap(), 0);
        let e = parse_time("since", "last tuesday").unwrap_err();
        assert!(e.message().contains("RFC 3339"), "{e:?}");
        assert_eq!(rfc3339(86_400_000), "1970-01-02T00:00:00.000Z");
    }

    #[test]
    fn every_tool_has_an_object_schema() {
        for t in TOOLS {
            let s = (t.schema)();
            assert_eq!(s.get("type"), Some(&json!("object")), "{}", t.name);
        }
        let search = (tool("search").unwrap().schema)();
        assert_eq!(search["required"], json!(["query"]));
        assert!(search["properties"]["since"]["description"]
            .as_str()
            .unwrap()
            .contains("RFC 3339"));
    }

    #[test]
    fn limits_are_checked() {
        assert_eq!(limit(None, 10).unwrap(), 10);
        assert!(limit(Some(0), 10).is_err());
        assert!(limit(Some(u32::MAX), 10).is_err());
    }
}
