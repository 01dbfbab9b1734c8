//! The command layer on Tauri's mock runtime: what the web view sends is what the engine gets,
//! and engine errors reach the web view as a `CommandError` with a kind and a message.

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY,
};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};
use umwelt_app::state::{AppState, Opening};

fn app(data_dir: &std::path::Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    // Plain: a test never puts a key in the keyring of the session it runs in (the window
    // tests cover encryption, against a keyring of their own).
    if !data_dir.join("settings.json").exists() {
        std::fs::create_dir_all(data_dir).unwrap();
        std::fs::write(data_dir.join("settings.json"), r#"{"encryption": "off"}"#).unwrap();
    }
    let app = umwelt_app::with_commands(mock_builder())
        .manage(
            match AppState::open(data_dir.to_path_buf(), None).unwrap() {
                Opening::Ready(state) => *state,
                Opening::Ask(ask) => panic!("a new data folder asked for a passphrase: {ask:?}"),
            },
        )
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

/// The app's memory file opened again, as another process would: plain, as [`app`] keeps it,
/// whatever `UMWELT_TEST_ENCRYPTION` says.
fn reopen(path: &std::path::Path) -> umwelt::Store {
    umwelt::Store::open_keyed(
        path,
        std::sync::Arc::new(umwelt::embed::LazyEmbedder::new()),
        None,
    )
    .unwrap()
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

    let list = invoke(&w, "list_memories", json!({ "filter": all(), "limit": 10 })).unwrap()
        ["memories"]
        .clone();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["text"], "the dentist is on Tuesday", "newest first");

    let hits = invoke(&w, "recall", json!({ "query": "groceries", "k": 5 })).unwrap();
    assert_eq!(hits[0]["memory"]["id"], milk["id"]);
    assert!(hits[0]["score"].as_f64().unwrap() >= hits[1]["score"].as_f64().unwrap());

    invoke(&w, "delete_memory", json!({ "id": milk["id"] })).unwrap();
    let list = invoke(
        &w,
        "list_memories",
        json!({ "filter": all(), "limit": 10, "after": null }),
    )
    .unwrap()["memories"]
        .clone();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "a deleted memory leaves the list at once"
    );
    // Undo brings it back; deleted again and the window closing, it is gone for good.
    let back = invoke(&w, "undo_delete", json!({ "id": milk["id"] })).unwrap();
    assert_eq!(back["text"], "remember to buy milk");
    assert_eq!(
        invoke(&w, "count_memories", json!({ "filter": all() })).unwrap(),
        json!(2)
    );
    invoke(&w, "delete_memory", json!({ "id": milk["id"] })).unwrap();
    umwelt_app::on_event(_app.handle(), &tauri::RunEvent::Exit);
    let other = reopen(&dir.path().join("memories.sqlite"));
    assert_eq!(
        other.count("me").unwrap(),
        1,
        "a waiting deletion is carried out on exit"
    );
    let e = invoke(&w, "undo_delete", json!({ "id": milk["id"] })).unwrap_err();
    assert_eq!(e["kind"], "not_found");
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
    let e = invoke(
        &w,
        "save_draft",
        json!({ "id": "1234", "text": "hi", "keepFile": false }),
    )
    .unwrap_err();
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
    let other = reopen(&dir.path().join("memories.sqlite"));
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
    let list = invoke(&w, "list_memories", json!({ "filter": all(), "limit": 10 })).unwrap()
        ["memories"]
        .clone();
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
        invoke(&w, "list_memories", json!({ "filter": all(), "limit": 10 })).unwrap()["memories"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[path = "../../tests/common/hostile.rs"]
mod hostile;

/// What a refused `cmd` must leave as it was: the part of the app's data it could change (the
/// memories, the drafts, the kept runs or the settings); nothing for the commands that only read.
fn fingerprint(state: &AppState, cmd: &str) -> String {
    // Deletions wait out their Undo time on their own timers: what the window shows (the
    // memories not waiting to go) is what must not change.
    let memories = || {
        let shown: Vec<(i64, String)> = state
            .store
            .list(&state.scope, 10_000, None)
            .unwrap()
            .into_iter()
            .filter(|m| !state.forgetting.is_waiting(m.id))
            .map(|m| (m.id, m.text))
            .collect();
        format!("{shown:?}; {} drafts", state.dictation.drafts().len())
    };
    match cmd {
        "remember" | "delete_memory" | "undo_delete" | "edit_memory" | "restore_version"
        | "forget_session" | "undo_forget" | "save_draft" | "discard_draft" | "retry_draft" => {
            memories()
        }
        "import_run" | "delete_run" => format!("{} runs", state.runs.count().unwrap()),
        "save_settings" => serde_json::to_string(&*state.settings.lock().unwrap()).unwrap(),
        _ => String::new(),
    }
}

/// Every command the web view can call, with the names of its arguments and a valid example,
/// except those whose valid arguments start real work outside the app's files: `speak` (the
/// voice on the speaker), `run_bench` (a benchmark), `start_dictation` and
/// `start_microphone_check` (the microphone), `open_log_folder` (the file manager) and `save_run`
/// (a file in the user's Downloads folder), `export_memories` (files wherever it is told),
/// `import_notes` and `transcribe_file` (the user's files, with a progress channel),
/// `load_demo_town` (builds a town file, with a progress channel) and
/// `forget_everything` (its one argument is `forget_session`'s, fuzzed there). Their arguments go through the same deserializer.
fn fuzzed_commands() -> Vec<(&'static str, Value)> {
    vec![
        (
            "list_memories",
            json!({ "filter": all(), "limit": 10, "after": null }),
        ),
        ("count_memories", json!({ "filter": all() })),
        ("get_memory", json!({ "id": 1 })),
        ("remember", json!({ "text": "buy milk" })),
        ("edit_memory", json!({ "id": 1, "text": "buy oat milk" })),
        ("memory_versions", json!({ "id": 1 })),
        ("restore_version", json!({ "id": 1, "version": 1 })),
        ("recall", json!({ "query": "milk", "k": 5 })),
        (
            "search",
            json!({ "query": "milk", "k": 5, "filter": all() }),
        ),
        ("delete_memory", json!({ "id": 1 })),
        ("undo_delete", json!({ "id": 1 })),
        ("list_sessions", json!({})),
        ("session_log", json!({ "session": "voice", "limit": 10 })),
        (
            "forget_session",
            json!({ "session": "voice", "confirmed": 0 }),
        ),
        ("undo_forget", json!({ "ticket": 1 })),
        ("default_export_path", json!({ "format": "markdown" })),
        ("audio_extensions", json!({})),
        ("cancel_job", json!({})),
        ("list_microphones", json!({})),
        ("stop_microphone_check", json!({})),
        ("stop_dictation", json!({})),
        ("list_drafts", json!({})),
        (
            "save_draft",
            json!({ "id": "1700000000000", "text": "a note", "keepFile": false }),
        ),
        ("discard_draft", json!({ "id": "1700000000000" })),
        ("retry_draft", json!({ "id": "1700000000000" })),
        ("bench_scenarios", json!({})),
        ("machine", json!({})),
        ("cancel_bench", json!({})),
        ("list_runs", json!({})),
        ("get_run", json!({ "id": 1 })),
        ("delete_run", json!({ "id": 1 })),
        ("compare_runs", json!({ "before": 1, "after": 2 })),
        ("import_run", json!({ "json": "{}" })),
        ("export_run", json!({ "id": 1, "format": "json" })),
        ("real_timings", json!({})),
        ("list_voices", json!({})),
        ("list_speakers", json!({})),
        ("stop_speaking", json!({})),
        ("get_settings", json!({})),
        (
            "save_settings",
            json!({ "settings": serde_json::to_value(umwelt::settings::Settings::default()).unwrap() }),
        ),
        ("take_startup_note", json!({})),
        ("log_folder", json!({})),
        ("demo_town_ready", json!({})),
        ("list_holders", json!({ "world": "notebook" })),
        ("list_entities", json!({ "world": "notebook" })),
        (
            "holder_holdings",
            json!({ "world": "notebook", "holder": 1, "cursor": null }),
        ),
        (
            "entity_holdings",
            json!({ "world": "notebook", "entity": "milk", "cursor": null }),
        ),
        ("who_holds", json!({ "world": "notebook", "claim": 1 })),
        (
            "search_claims",
            json!({ "world": "notebook", "holder": null, "query": "milk", "k": 5 }),
        ),
    ]
}

/// Hostile arguments for every command: the right names with hostile values, a valid example
/// mutated, or anything at all. No panic; an error is a `CommandError` with a kind and a
/// message; and a refused call changes nothing. `UMWELT_FUZZ_CASES` sets the number of calls
/// (CI: 6 000; the recorded run: 1 000 000).
#[test]
fn every_command_refuses_hostile_arguments_and_a_refusal_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (app, w) = app(dir.path());
    let state = app.state::<AppState>();
    for t in ["buy oat milk", "the dentist on Tuesday"] {
        invoke(&w, "remember", json!({ "text": t })).unwrap();
    }
    let commands = fuzzed_commands();
    let n = hostile::cases(6_000);
    let mut h = hostile::Hostile::new(7);
    let (mut ok, mut refused) = (0usize, 0usize);
    let t0 = std::time::Instant::now();
    for i in 0..n {
        let (cmd, example) = &commands[h.below(commands.len())];
        let args = match h.below(4) {
            0 | 1 => {
                let mut m = serde_json::Map::new();
                for k in example.as_object().unwrap().keys() {
                    m.insert(k.clone(), h.value(i, 2));
                }
                Value::Object(m)
            }
            2 => h.mutate_json(i, example),
            _ => h.value(i, 3),
        };
        // A 10 MB note is refused by length, but recall would embed it: fine, only slower.
        let before = fingerprint(&state, cmd);
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            invoke(&w, cmd, args.clone())
        }))
        .unwrap_or_else(|_| panic!("{cmd} panicked on case {i}: {args}"));
        match reply {
            Ok(_) => ok += 1,
            Err(e) => {
                refused += 1;
                // Argument errors come from Tauri as a string; the command's own as a CommandError.
                assert!(
                    e.is_string() || (e["kind"].is_string() && e["message"].is_string()),
                    "{cmd} case {i}: {e}"
                );
                assert_eq!(
                    fingerprint(&state, cmd),
                    before,
                    "{cmd} was refused but changed something (case {i}: {args})"
                );
            }
        }
    }
    eprintln!(
        "IPC fuzz: {n} calls over {} commands, {ok} accepted, {refused} refused, 0 panics, {:.1} s",
        commands.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// A draft of a second of silence, written as the dictation writes one.
/// A filter that keeps every memory.
fn all() -> Value {
    json!({ "session": null, "source": null, "from": null, "to": null })
}

fn make_draft(data_dir: &std::path::Path, id: &str) {
    let recordings = data_dir.join("recordings");
    std::fs::create_dir_all(&recordings).unwrap();
    let wav = recordings.join(format!("{id}.wav"));
    umwelt::audio::write_wav_16k_mono(&wav, &[0.0; 16_000]).unwrap();
    let draft = umwelt::speech::Draft {
        id: id.into(),
        audio_path: wav.to_string_lossy().into_owned(),
        text: "a dictated note".into(),
        seconds: 1.0,
        created_at: 1,
        problem: None,
        source: "dictated".into(),
        segments: Vec::new(),
        file_name: None,
    };
    std::fs::write(
        recordings.join(format!("{id}.draft.json")),
        serde_json::to_vec(&draft).unwrap(),
    )
    .unwrap();
}

/// Pairs of calls made at the same moment from two threads (as two clicks, or a click and the
/// shortcut): saving one draft twice, retrying a draft while it is saved, and recalling while
/// memories are deleted. Each ends as if the two had come one after the other.
#[test]
fn concurrent_pairs_end_as_if_one_came_after_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let (app, w) = app(dir.path());
    let state = app.state::<AppState>();
    let at_once = |a: (&str, Value), b: (&str, Value)| {
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let one = s.spawn(|| {
                barrier.wait();
                invoke(&w, a.0, a.1.clone())
            });
            let two = s.spawn(|| {
                barrier.wait();
                invoke(&w, b.0, b.1.clone())
            });
            (one.join().unwrap(), two.join().unwrap())
        })
    };

    // Save the same draft twice: one memory, the draft gone, the other save told why.
    for round in 0..40 {
        let id = format!("{}", 1_700_000_000_000u64 + round);
        make_draft(dir.path(), &id);
        let save = (
            "save_draft",
            json!({ "id": id, "text": format!("note {round}"), "keepFile": false }),
        );
        let (a, b) = at_once(save.clone(), save);
        let saved: Vec<&Value> = [&a, &b]
            .into_iter()
            .filter_map(|r| r.as_ref().ok())
            .collect();
        assert_eq!(saved.len(), 1, "round {round}: {a:?} / {b:?}");
        let refused = [&a, &b].into_iter().find_map(|r| r.as_ref().err()).unwrap();
        assert_eq!(refused["kind"], "not_found", "{refused}");
        assert!(state.dictation.drafts().is_empty());
    }
    assert_eq!(state.store.count(&state.scope).unwrap(), 40);

    // Retry while saving: whichever comes first, the draft never comes back once saved.
    for round in 0..8 {
        let id = format!("{}", 1_800_000_000_000u64 + round);
        make_draft(dir.path(), &id);
        let (retried, saved) = at_once(
            ("retry_draft", json!({ "id": id })),
            (
                "save_draft",
                json!({ "id": id, "text": "kept as typed", "keepFile": false }),
            ),
        );
        saved.unwrap_or_else(|e| panic!("round {round}: the save failed: {e}"));
        if let Err(e) = &retried {
            assert_eq!(e["kind"], "not_found", "{e}");
        }
        assert!(
            state.dictation.drafts().is_empty(),
            "round {round}: a saved draft came back ({retried:?})"
        );
    }
    assert_eq!(state.store.count(&state.scope).unwrap(), 48);

    // Recall while deleting: every recall answers, with none of what is gone by its end.
    let ids: Vec<i64> = state
        .store
        .list(&state.scope, 100, None)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    std::thread::scope(|s| {
        let deleter = s.spawn(|| {
            for id in &ids {
                invoke(&w, "delete_memory", json!({ "id": id })).unwrap();
            }
        });
        while !deleter.is_finished() {
            invoke(&w, "recall", json!({ "query": "note", "k": 10 })).unwrap();
        }
    });
    // The deletions wait out their Undo time; carried out now, as on exit.
    state.forgetting.flush();
    let hits = invoke(&w, "recall", json!({ "query": "note", "k": 10 })).unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 0);
}
