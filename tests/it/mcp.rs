//! `umwelt-cli mcp` as an agent meets it: the real binary as a child process, driven by rmcp's
//! own client over stdio, on a real memory file that this test's process writes to at the same
//! time. Initialize, the tools and their schemas, remember, search and find, recall, get, the
//! sessions, the newest memories as resources, holdings, forget; the writing tools hidden and
//! refused by `--read-only` and by Settings → Agents; and bad requests, each a JSON-RPC error
//! that leaves the server answering.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use umwelt::Store;

const INVALID_PARAMS: i32 = -32602;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A data folder whose Settings → Agents lets agents write, or not.
fn data_dir(dir: &Path, may_write: bool) -> std::path::PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("settings.json"),
        json!({ "agents_may_write": may_write }).to_string(),
    )
    .unwrap();
    data
}

async fn connect(
    db: &Path,
    data: &Path,
    read_only: bool,
) -> RunningService<RoleClient, ClientConfig> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_umwelt-cli")).configure(|c| {
        c.arg("--db")
            .arg(db)
            .arg("mcp")
            .env("UMWELT_DATA_DIR", data);
        if read_only {
            c.arg("--read-only");
        }
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("test-agent", "1.0"),
    )
    .serve(transport)
    .await
    .expect("the server completes the handshake")
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments are an object"),
    }
}

async fn call(
    client: &RunningService<RoleClient, ClientConfig>,
    tool: &'static str,
    a: Value,
) -> Result<Value, ServiceError> {
    let r = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(a)))
        .await?;
    assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
    Ok(r.structured_content.expect("a structured result"))
}

/// The JSON-RPC error a call gave: its code and message.
fn refused(r: Result<Value, ServiceError>) -> (i32, String) {
    match r {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[test]
fn an_agent_remembers_finds_reads_and_forgets() {
    let _g = crate::common::shared();
    let (dir, db) = crate::common::temp_db();
    let data = data_dir(dir.path(), true);
    runtime().block_on(async {
        let client = connect(&db, &data, false).await;
        let info = client.peer_info().expect("the server introduced itself");
        assert_eq!(info.server_info.as_ref().unwrap().name, "umwelt");
        assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());

        let tools = client.list_tools(None).await.unwrap().tools;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "remember",
                "search",
                "recall",
                "get_memory",
                "list_sessions",
                "holdings",
                "forget"
            ]
        );
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                t.name
            );
            assert!(
                t.description.as_ref().is_some_and(|d| d.len() > 40),
                "{}",
                t.name
            );
        }

        let mut ids = Vec::new();
        for (text, session) in [
            (
                "Dr. Okafor wants the blood tests repeated in March",
                "health",
            ),
            (
                "Luis recommended the conference in Lisbon for the keynote",
                "",
            ),
            ("Buy oat milk and lemons on the way home", ""),
        ] {
            let r = call(
                &client,
                "remember",
                json!({ "text": text, "session": session }),
            )
            .await
            .unwrap();
            ids.push(r["id"].as_i64().expect("an id"));
        }
        let doctor = ids[0];

        // Another writer on the same file, while the server has it open.
        let here = Store::open(&db).unwrap();
        let ours = here
            .remember("me", "", "The plumber comes on Thursday at nine")
            .unwrap();

        let found = call(&client, "search", json!({ "query": "blood tests" }))
            .await
            .unwrap();
        let first = &found["hits"][0];
        assert_eq!(first["memory"]["id"], json!(doctor));
        assert_eq!(first["memory"]["source"], json!("agent: test-agent"));
        assert_eq!(first["memory"]["session"], json!("health"));
        assert!(first["why"]["keyword_rank"].is_number(), "{first}");
        assert!(first["memory"]["created"].as_str().unwrap().ends_with('Z'));

        let plumber = call(
            &client,
            "search",
            json!({ "query": "when is the plumber coming", "limit": 2 }),
        )
        .await
        .unwrap();
        assert_eq!(plumber["hits"][0]["memory"]["id"], json!(ours), "{plumber}");
        assert!(plumber["hits"].as_array().unwrap().len() <= 2);

        let recalled = call(
            &client,
            "recall",
            json!({ "query": "what did the doctor say about the lab work", "limit": 3 }),
        )
        .await
        .unwrap();
        assert_eq!(
            recalled["hits"][0]["memory"]["id"],
            json!(doctor),
            "{recalled}"
        );

        // A time span: nothing was made before 2001.
        let old = call(
            &client,
            "search",
            json!({ "query": "blood tests", "until": "2001-01-01" }),
        )
        .await
        .unwrap();
        assert_eq!(old["hits"], json!([]));
        let only = call(
            &client,
            "search",
            json!({ "query": "blood tests", "session": "health", "since": "2001-01-01T00:00:00Z" }),
        )
        .await
        .unwrap();
        assert_eq!(only["hits"].as_array().unwrap().len(), 1, "{only}");

        let got = call(&client, "get_memory", json!({ "id": doctor }))
            .await
            .unwrap();
        assert_eq!(
            got["memory"]["text"],
            json!("Dr. Okafor wants the blood tests repeated in March")
        );
        assert_eq!(got["earlier_texts"], json!([]));

        let sessions = call(&client, "list_sessions", json!({})).await.unwrap();
        let names: Vec<&str> = sessions["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"health") && names.contains(&""),
            "{sessions}"
        );

        let held = call(&client, "holdings", json!({ "holder": "me", "limit": 2 }))
            .await
            .unwrap();
        assert_eq!(held["holdings"].as_array().unwrap().len(), 2, "{held}");
        assert!(
            held["next"].is_string(),
            "a full page has a next cursor: {held}"
        );
        let rest = call(
            &client,
            "holdings",
            json!({ "holder": "me", "limit": 10, "cursor": held["next"] }),
        )
        .await
        .unwrap();
        assert_eq!(rest["holdings"].as_array().unwrap().len(), 2, "{rest}");

        // The newest memories are resources, and each reads as its text.
        let resources = client.list_resources(None).await.unwrap().resources;
        let uri = format!("umwelt://memory/{doctor}");
        assert!(resources.iter().any(|r| r.uri == uri), "{resources:?}");
        assert_eq!(resources.len(), 4);
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => {
                assert!(text.starts_with("Dr. Okafor"))
            }
            other => panic!("a text resource, not {other:?}"),
        }

        let gone = call(&client, "forget", json!({ "id": doctor }))
            .await
            .unwrap();
        assert_eq!(gone["forgotten"], json!(doctor));
        let (code, message) = refused(call(&client, "get_memory", json!({ "id": doctor })).await);
        assert_eq!(code, INVALID_PARAMS);
        assert!(
            message.contains(&format!("no memory with id {doctor}")),
            "{message}"
        );
        assert!(matches!(here.get(doctor), Err(umwelt::Error::NotFound(_))));
        // The memory written by the agent is in the file, marked as the agent's, and the
        // browser's "By an agent" filter keeps exactly the agents' memories.
        assert_eq!(here.get(ids[1]).unwrap().source, "agent: test-agent");
        let agents = umwelt::store::Filter {
            source: Some("agent".into()),
            ..Default::default()
        };
        let page = here.page("me", &agents, 10, None).unwrap();
        let mut kept: Vec<i64> = page.memories.iter().map(|m| m.id).collect();
        kept.sort();
        assert_eq!(kept, [ids[1], ids[2]]);
        assert_eq!(here.count_matching("me", &agents).unwrap(), 2);
        let found = here.search_in("oat milk lemons", "me", &agents, 5).unwrap();
        assert_eq!(found[0].memory.id, ids[2]);
        assert!(here
            .search_in("plumber Thursday", "me", &agents, 5)
            .unwrap()
            .iter()
            .all(|h| h.memory.source.starts_with("agent: ")));

        client.cancel().await.unwrap();
    });
}

#[test]
fn bad_requests_get_clear_errors_and_the_server_keeps_answering() {
    let _g = crate::common::shared();
    let (dir, db) = crate::common::temp_db();
    let data = data_dir(dir.path(), true);
    runtime().block_on(async {
        let client = connect(&db, &data, false).await;
        let id = call(
            &client,
            "remember",
            json!({ "text": "The bins go out on Monday" }),
        )
        .await
        .unwrap()["id"]
            .as_i64()
            .unwrap();

        let cases: Vec<(&'static str, Value, &str)> = vec![
            (
                "drop_everything",
                json!({}),
                "there is no tool 'drop_everything'",
            ),
            (
                "search",
                json!({ "query": "bins", "limit": "ten" }),
                "do not fit its schema",
            ),
            (
                "search",
                json!({ "query": "bins", "colour": "red" }),
                "unknown field `colour`",
            ),
            ("search", json!({}), "missing field `query`"),
            ("search", json!({ "query": "   " }), "the search is empty"),
            (
                "search",
                json!({ "query": "bins", "limit": 0 }),
                "limit must be between",
            ),
            (
                "search",
                json!({ "query": "bins", "since": "last tuesday" }),
                "RFC 3339",
            ),
            (
                "recall",
                json!({ "query": "bins", "limit": 1_000_000 }),
                "limit must be between",
            ),
            (
                "remember",
                json!({ "text": "x".repeat(200_000) }),
                "at most 64 KiB",
            ),
            ("remember", json!({ "text": "" }), "empty"),
            (
                "get_memory",
                json!({ "id": 999_999 }),
                "no memory with id 999999",
            ),
            (
                "get_memory",
                json!({ "id": "one" }),
                "do not fit its schema",
            ),
            ("forget", json!({ "id": -5 }), "no memory with id -5"),
            ("holdings", json!({}), "give either 'holder'"),
            (
                "holdings",
                json!({ "holder": "nobody-here" }),
                "the holder 'nobody-here' was not found",
            ),
            (
                "holdings",
                json!({ "about": "x", "cursor": "garbage" }),
                "cursor",
            ),
        ];
        for (tool, a, expected) in cases {
            let (code, message) = refused(call(&client, tool, a.clone()).await);
            assert_eq!(code, INVALID_PARAMS, "{tool} {a}: {message}");
            assert!(
                message.to_lowercase().contains(&expected.to_lowercase()),
                "{tool} {a}: '{message}' does not say '{expected}'"
            );
        }
        let (_, message) = refused(
            client
                .read_resource(ReadResourceRequestParams::new("file:///etc/passwd"))
                .await
                .map(|_| Value::Null),
        );
        assert!(message.contains("umwelt://memory/ID"), "{message}");

        // Hostile search strings are words to look for, never syntax.
        for hostile in [
            "\"unbalanced",
            "NEAR(bins monday) OR * AND -",
            "'; DROP TABLE claim; --",
            "bins\u{0}monday",
            "🗑️ ☃ \u{202e}",
        ] {
            let r = call(&client, "search", json!({ "query": hostile }))
                .await
                .unwrap();
            assert!(r["hits"].is_array(), "{hostile}: {r}");
        }

        // After all that, the server still answers, and nothing was lost.
        let r = call(&client, "search", json!({ "query": "bins Monday" }))
            .await
            .unwrap();
        assert_eq!(r["hits"][0]["memory"]["id"], json!(id));
        client.cancel().await.unwrap();
        let store = Store::open(&db).unwrap();
        assert_eq!(store.count("me").unwrap(), 1);
    });
}

#[test]
fn writing_is_off_unless_the_user_turned_it_on_and_never_with_read_only() {
    let _g = crate::common::shared();
    let (dir, db) = crate::common::temp_db();
    let allowed = data_dir(dir.path(), true);
    let refused_dir = dir.path().join("never-set");
    std::fs::create_dir_all(&refused_dir).unwrap();
    runtime().block_on(async {
        for (data, read_only) in [(&allowed, true), (&refused_dir, false)] {
            let client = connect(&db, data, read_only).await;
            let tools = client.list_tools(None).await.unwrap().tools;
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            assert_eq!(
                names,
                [
                    "search",
                    "recall",
                    "get_memory",
                    "list_sessions",
                    "holdings"
                ],
                "read_only {read_only}"
            );
            for t in &tools {
                let a = t.annotations.as_ref().expect("annotated");
                assert_eq!(a.read_only_hint, Some(true), "{}", t.name);
            }
            let (code, message) =
                refused(call(&client, "remember", json!({ "text": "sneaky" })).await);
            assert_eq!(code, INVALID_PARAMS);
            assert!(message.contains("Settings → Agents"), "{message}");
            client.cancel().await.unwrap();
        }

        // The user turns writing on while the server runs: the next call may write.
        let off = dir.path().join("off");
        let _ = data_dir(dir.path(), false);
        std::fs::rename(dir.path().join("data"), &off).unwrap();
        let client = connect(&db, &off, false).await;
        assert!(call(&client, "remember", json!({ "text": "not yet" }))
            .await
            .is_err());
        std::fs::write(
            off.join("settings.json"),
            json!({ "agents_may_write": true }).to_string(),
        )
        .unwrap();
        assert!(call(&client, "remember", json!({ "text": "now allowed" }))
            .await
            .is_ok());
        client.cancel().await.unwrap();
    });
    let store = Store::open(&db).unwrap();
    let texts: Vec<String> = store
        .list("me", 10, None)
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(texts, ["now allowed"]);
}

/// A client that sends garbage, or disconnects in the middle of a call, does not hurt the file
/// or leave the server hanging: it exits when its input closes.
#[test]
fn a_client_that_disconnects_mid_call_leaves_the_file_whole() {
    use std::io::{BufRead, BufReader, Write};
    let _g = crate::common::shared();
    let (dir, db) = crate::common::temp_db();
    let data = data_dir(dir.path(), true);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_umwelt-cli"))
        .arg("--db")
        .arg(&db)
        .arg("mcp")
        .env("UMWELT_DATA_DIR", &data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let send = |stdin: &mut std::process::ChildStdin, v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["id"], json!(1), "{line}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    // Not JSON at all, then a request for a method that does not exist: the server goes on.
    writeln!(stdin, "{{ this is not json").unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "memories/steal", "params": {}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"text": "Written before the client left"}}}),
    );
    let mut seen = Vec::new();
    while seen.len() < 2 {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the server closed early"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("id").is_some() {
            seen.push(v);
        }
    }
    let by_id = |id: i64| seen.iter().find(|v| v["id"] == json!(id)).unwrap();
    assert_eq!(by_id(2)["error"]["code"], json!(-32601), "{seen:?}");
    assert!(
        by_id(3)["result"]["structuredContent"]["id"].is_number(),
        "{seen:?}"
    );
    // A call, and the client leaves before its answer.
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"text": "Sent as the client left"}}}),
    );
    drop(stdin);
    drop(out);
    let status = wait_for(&mut child, 30);
    assert!(
        status.is_some(),
        "the server did not exit when its client left"
    );
    let store = Arc::new(Store::open(&db).unwrap());
    let n = store.count("me").unwrap();
    assert!((1..=2).contains(&n), "{n} memories");
    assert!(store
        .list("me", 5, None)
        .unwrap()
        .iter()
        .any(|m| m.text == "Written before the client left"));
}

fn wait_for(child: &mut std::process::Child, secs: u64) -> Option<std::process::ExitStatus> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < until {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    None
}
