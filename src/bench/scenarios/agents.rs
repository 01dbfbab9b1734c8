//! Agents: what a local agent waits for when it asks Umwelt over the Model Context Protocol. The
//! harness starts its own binary again as the MCP server (`crate::mcp::serve_if_asked`, read
//! only) on the retrieval set's file (10 000 everyday notes, real vectors), shakes hands as a
//! client does, and times each `tools/call` of `search` from the request written on the
//! server's stdin to its answer read whole from its stdout: the question's embedding, the
//! hybrid search, and the JSON both ways included.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

use super::quality::built;
use super::{prepared, time, Ctx, Prepared, Sample, Scenario};
use crate::bench::retrieval_set::{RetrievalSet, SCOPE};
use crate::embed::Embedder;
use crate::error::{Error, Result};

const K: usize = 10;

pub(super) const SCENARIOS: &[Scenario] = &[Scenario::new(
    "mcp_search",
    "an agent's search over MCP (stdio): from the tools/call written to the server to its answer read, among 10 000 everyday notes",
    mcp_search,
)
// Issue 37: a search round trip over stdio at 10 000 memories within 5 ms (p50).
.targets(&[(10_000, 5.0)])
.needs_model()
.sizes(&[10_000])
.iterations(120)
.both_ways()];

/// The server, and the client's end of its pipes.
struct Server {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
    next_id: i64,
    line: String,
}

impl Server {
    fn start(db: &std::path::Path) -> Result<Server> {
        let exe = std::env::current_exe().map_err(Error::io("finding this program's file"))?;
        let mut cmd = Command::new(&exe);
        cmd.env(crate::mcp::SERVE_DB_ENV, db)
            .env(crate::mcp::SERVE_SCOPE_ENV, SCOPE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // The server measures the same way as this run: with the optimisations or without.
        if !crate::optimisations::enabled() {
            cmd.env("UMWELT_PERF", "off");
        }
        let mut child = cmd.spawn().map_err(Error::io(format!(
            "starting {} as an MCP server",
            exe.display()
        )))?;
        let (Some(stdin), Some(out)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were asked for");
        };
        let mut server = Server {
            child,
            stdin,
            out: BufReader::new(out),
            next_id: 0,
            line: String::new(),
        };
        server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "umwelt-bench", "version": env!("CARGO_PKG_VERSION") }
            }),
        )?;
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.stdin, "{message}")
            .and_then(|()| self.stdin.flush())
            .map_err(Error::io("writing to the MCP server"))
    }

    /// Send a request and wait for its answer's `result`.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            self.line.clear();
            let n = self
                .out
                .read_line(&mut self.line)
                .map_err(Error::io("reading the MCP server's answer"))?;
            if n == 0 {
                return Err(Error::InvalidInput(
                    "the MCP server closed its output before answering".into(),
                ));
            }
            let mut reply: Value = serde_json::from_str(&self.line).map_err(|e| {
                Error::InvalidInput(format!("the MCP server wrote something not JSON: {e}"))
            })?;
            if reply["id"] != json!(id) {
                continue; // a notification, or a log line
            }
            if let Some(e) = reply.get("error") {
                return Err(Error::InvalidInput(format!(
                    "the MCP server refused {method}: {e}"
                )));
            }
            return Ok(reply["result"].take());
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mcp_search(ctx: &mut Ctx, size: usize) -> Result<Prepared> {
    let embedder = Embedder::load()?;
    let (path, _set) = built(ctx, size, &embedder)?;
    drop(embedder);
    let mut server = Server::start(&path)?;
    let questions = RetrievalSet::committed().questions;
    let n = questions.len();
    prepared(ctx.warmup.max(3), move |i| {
        let q = questions[i % n].text;
        let (ms, result) = time(|| {
            server.request(
                "tools/call",
                json!({ "name": "search", "arguments": { "query": q, "limit": K } }),
            )
        })?;
        let ids: Vec<i64> = result["structuredContent"]["hits"]
            .as_array()
            .map(|hits| {
                hits.iter()
                    .filter_map(|h| h["memory"]["id"].as_i64())
                    .collect()
            })
            .unwrap_or_default();
        if ids.is_empty() {
            return Err(Error::InvalidInput(format!(
                "the MCP server's search for '{q}' found nothing among {size} notes"
            )));
        }
        Ok(Sample { ms, ids: None })
    })
}
