//! The command layer on Tauri's mock runtime: what the web view sends is what the engine gets,
//! and engine errors reach the web view as a `CommandError` with a kind and a message.

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY,
};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};
use umwelt_app::state::AppState;

fn app(data_dir: &std::path::Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let app = umwelt_app::with_commands(mock_builder())
        .manage(AppState::open(data_dir.to_path_buf()).unwrap())
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

fn invoke(webview: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

#[test]
fn remember_list_recall_and_delete_through_the_ipc_layer() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, w) = app(dir.path());
    let milk = invoke(&w, "remember", json!({ "text": "remember to buy milk" })).unwrap();
    assert_eq!(milk["text"], "remember to buy milk");
    assert_eq!(milk["source"], "typed");
    invoke(
        &w,
        "remember",
        json!({ "text": "the dentist is on Tuesday" }),
    )
    .unwrap();

    let list = invoke(&w, "list_memories", json!({ "limit": 10 })).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["text"], "the dentist is on Tuesday", "newest first");

    let hits = invoke(&w, "recall", json!({ "query": "groceries", "k": 5 })).unwrap();
    assert_eq!(hits[0]["memory"]["id"], milk["id"]);
    assert!(hits[0]["score"].as_f64().unwrap() >= hits[1]["score"].as_f64().unwrap());

    invoke(&w, "delete_memory", json!({ "id": milk["id"] })).unwrap();
    let list = invoke(&w, "list_memories", json!({ "limit": 10, "before": null })).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    // The file is the one under the data directory, so a restart finds it.
    assert!(dir.path().join("memories.sqlite").exists());
}

#[test]
fn engine_errors_reach_the_web_view_with_a_kind_and_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, w) = app(dir.path());
    let e = invoke(&w, "remember", json!({ "text": "   " })).unwrap_err();
    assert_eq!(e["kind"], "input");
    assert!(e["message"].as_str().unwrap().contains("empty"), "{e}");

    let e = invoke(&w, "delete_memory", json!({ "id": 999 })).unwrap_err();
    assert_eq!(e["kind"], "not_found");

    let e = invoke(&w, "stop_dictation", json!({})).unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("Record first"),
        "{e}"
    );

    // Drafts: none yet; a draft that is not there, or a hostile id, is a clear refusal.
    assert_eq!(invoke(&w, "list_drafts", json!({})).unwrap(), json!([]));
    let e = invoke(&w, "save_draft", json!({ "id": "1234", "text": "hi" })).unwrap_err();
    assert_eq!(e["kind"], "not_found", "{e}");
    let e = invoke(&w, "discard_draft", json!({ "id": "../settings" })).unwrap_err();
    assert_eq!(e["kind"], "input", "{e}");
}

#[test]
fn history_and_turns_queued_when_the_app_exits_are_written() {
    use umwelt::store::journal::Turn;
    let dir = tempfile::tempdir().unwrap();
    let (app, _w) = app(dir.path());
    let state = app.state::<AppState>();
    for i in 0..20 {
        state
            .store
            .append_message("me", "voice", "user", &format!("m{i}"))
            .unwrap();
    }
    let turn = Turn {
        user_text: "what did I say".into(),
        reply_text: "buy milk".into(),
        stages: Vec::new(),
        at: 1,
    };
    state.store.log_turn("me", "voice", turn.clone()).unwrap();
    // The app leaves through process::exit: its store is never dropped. Its exit event is all
    // that runs.
    umwelt_app::on_event(app.handle(), &tauri::RunEvent::Exit);
    let other = umwelt::Store::open(dir.path().join("memories.sqlite")).unwrap();
    assert_eq!(other.history("me", "voice", 100).unwrap().len(), 20);
    assert_eq!(other.turns("me", "voice", 10).unwrap(), vec![turn]);
}

#[test]
fn a_fractional_id_is_refused_and_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, w) = app(dir.path());
    let mut ids = Vec::new();
    for text in ["one", "two", "three", "four"] {
        ids.push(invoke(&w, "remember", json!({ "text": text })).unwrap()["id"].clone());
    }
    assert_eq!(ids[2], json!(3));
    // 3.9 must not become 3 (a float truncated to an integer).
    let e = invoke(&w, "delete_memory", json!({ "id": 3.9 })).unwrap_err();
    assert!(e.to_string().contains("id"), "{e}");
    let list = invoke(&w, "list_memories", json!({ "limit": 10 })).unwrap();
    let texts: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["four", "three", "two", "one"],
        "memory 3 is still there"
    );
    invoke(&w, "delete_memory", json!({ "id": 3 })).unwrap();
    assert_eq!(
        invoke(&w, "list_memories", json!({ "limit": 10 }))
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );
}
