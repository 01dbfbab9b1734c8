//! Memories in and out: edit with versions kept and restored; a JSON export that round-trips
//! losslessly; a Markdown folder that reads back; a folder of notes with a BOM, CRLF, invalid
//! UTF-8, a 50 MB file and a PDF imported or skipped with the reason; a failed import that
//! writes nothing. And the CLI contract: `edit`, `import`, `export`.

use std::process::Command;

use umwelt::exchange::{self, ExportedMemory};
use umwelt::Store;

use crate::common;

fn cli(db: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_umwelt-cli"));
    c.arg("--db").arg(db);
    c
}

/// An export's memories without the ids (a new file gives new ones), in a comparable order.
fn comparable(e: &exchange::Export) -> Vec<ExportedMemory> {
    let mut m: Vec<ExportedMemory> = e
        .memories
        .iter()
        .cloned()
        .map(|mut m| {
            m.id = 0;
            for v in &mut m.versions {
                v.id = 0;
            }
            m
        })
        .collect();
    m.sort_by(|a, b| (a.created_at, &a.text).cmp(&(b.created_at, &b.text)));
    m
}

#[test]
fn an_edit_keeps_the_old_text_as_a_version_and_any_version_can_be_restored() {
    let _process = common::shared();
    let (_dir, db) = common::temp_db();
    let store = Store::open(&db).unwrap();
    let id = store.remember("me", "", "buy milk on Tuesday").unwrap();
    store
        .remember("me", "", "the dentist moved to Friday")
        .unwrap();
    let edited = store
        .edit(id, "buy oat milk and rye bread on Wednesday")
        .unwrap();
    assert_eq!(edited.text, "buy oat milk and rye bread on Wednesday");
    assert_eq!(edited.created_at, store.get(id).unwrap().created_at);
    // Re-indexed: the new words find it, the old ones no longer do.
    let hits = store.search_words("rye bread", "me", None, 5).unwrap();
    assert_eq!(hits[0].memory.id, id);
    assert!(store
        .search_words("Tuesday", "me", None, 5)
        .unwrap()
        .is_empty());
    // Re-embedded: its vector is the new text's.
    let hits = store.recall("bakery loaf", "me", None, 1).unwrap();
    assert_eq!(hits[0].memory.id, id, "{:?}", hits[0].memory.text);
    let versions = store.versions(id).unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].text, "buy milk on Tuesday");
    // The same text again changes nothing; restoring is an edit that can be undone.
    store
        .edit(id, "buy oat milk and rye bread on Wednesday")
        .unwrap();
    assert_eq!(store.versions(id).unwrap().len(), 1);
    let restored = store.restore(id, versions[0].id).unwrap();
    assert_eq!(restored.text, "buy milk on Tuesday");
    let versions = store.versions(id).unwrap();
    assert_eq!(
        versions.iter().map(|v| v.text.as_str()).collect::<Vec<_>>(),
        [
            "buy milk on Tuesday",
            "buy oat milk and rye bread on Wednesday"
        ]
    );
    assert_eq!(
        store.search_words("Tuesday", "me", None, 5).unwrap()[0]
            .memory
            .id,
        id
    );
    // Bad input changes nothing.
    assert!(store.edit(id, "   ").is_err());
    assert!(store.edit(999, "x").is_err());
    assert!(store.restore(id, 999).is_err());
    assert_eq!(store.get(id).unwrap().text, "buy milk on Tuesday");
    // Forgetting the memory forgets its versions.
    store.delete(id).unwrap();
    assert!(store.versions(id).unwrap().is_empty());
}

#[test]
fn a_json_export_round_trips_and_a_markdown_folder_reads_back() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("a.sqlite")).unwrap();
    // A recording of the folder's stores (they share `recordings/` beside them).
    let recording = dir
        .path()
        .join("recordings/1700000000123.wav")
        .to_string_lossy()
        .into_owned();
    let a = store.remember("me", "kitchen", "buy oat milk").unwrap();
    store
        .remember_new(&umwelt::store::NewMemory {
            scope: "me",
            session: "walk",
            text: "the \"blue\" door:\nsecond line — ünïcode 🦀",
            created_at: Some(1_700_000_000_123),
            source: Some("dictated"),
            audio_path: Some(&recording),
            ..Default::default()
        })
        .unwrap();
    store.remember("ana", "", "Ana's own note").unwrap();
    store.edit(a, "buy oat milk and bread").unwrap();
    let first = exchange::export(&store).unwrap();
    assert_eq!(first.memories.len(), 3);

    // JSON: into a fresh file and out again, the same.
    let json = serde_json::to_vec(&first).unwrap();
    let other = Store::open(dir.path().join("b.sqlite")).unwrap();
    exchange::write_all(&other, &exchange::parse_export(&json).unwrap().memories).unwrap();
    let second = exchange::export(&other).unwrap();
    assert_eq!(comparable(&second), comparable(&first));
    assert_eq!(other.search_words("bread", "me", None, 5).unwrap().len(), 1);

    // Markdown: one file per memory, and the folder imports back the same memories (the
    // versions stay in Umwelt: a note app has no place for them).
    let md = dir.path().join("md");
    std::fs::create_dir(&md).unwrap();
    for m in &first.memories {
        std::fs::write(
            md.join(exchange::markdown::file_name(m)),
            exchange::markdown::render(m),
        )
        .unwrap();
    }
    let third_store = Store::open(dir.path().join("c.sqlite")).unwrap();
    let report = exchange::import_paths(&third_store, &[md], "me").unwrap();
    assert_eq!(
        (report.imported.len(), report.skipped.len()),
        (3, 0),
        "{report:?}"
    );
    let mut expected = comparable(&first);
    for m in &mut expected {
        m.versions.clear();
    }
    assert_eq!(
        comparable(&exchange::export(&third_store).unwrap()),
        expected
    );
}

#[test]
fn a_folder_of_notes_imports_what_it_can_and_says_why_not_the_rest() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("sub")).unwrap();
    std::fs::create_dir_all(notes.join(".obsidian")).unwrap();
    std::fs::write(notes.join("bom.md"), "\u{feff}# Shopping\r\nbuy milk\r\n").unwrap();
    std::fs::write(notes.join("plain.txt"), "call mum about the holiday\n").unwrap();
    std::fs::write(
        notes.join("sub/dated.md"),
        "---\ncreated: 2024-02-29T08:30:00Z\nsession: trip\n---\npack the tent\n",
    )
    .unwrap();
    std::fs::write(notes.join("latin1.txt"), b"caf\xe9 au lait").unwrap();
    std::fs::write(notes.join("empty.md"), "   \n").unwrap();
    std::fs::write(notes.join("scan.pdf"), b"%PDF-1.4").unwrap();
    std::fs::write(notes.join(".obsidian/app.json"), "{}").unwrap();
    let big = std::fs::File::create(notes.join("huge.md")).unwrap();
    big.set_len(50 << 20).unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let report = exchange::import_paths(&store, &[notes.clone()], "me").unwrap();
    assert_eq!(report.imported.len(), 3, "{report:#?}");
    let why = |name: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.path.ends_with(name))
            .map(|s| s.why.clone())
            .unwrap_or_else(|| panic!("{name} not skipped: {report:#?}"))
    };
    assert!(why("latin1.txt").contains("UTF-8"));
    assert!(why("empty.md").contains("empty"));
    assert!(why("scan.pdf").contains("only .md"));
    assert!(why("huge.md").contains("too large"));
    assert_eq!(report.skipped.len(), 4, "hidden folders are not looked in");
    let texts: Vec<String> = store
        .list("me", 10, None)
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert!(
        texts.contains(&"# Shopping\nbuy milk".to_string()),
        "{texts:?}"
    );
    let tent = store.search_words("tent", "me", None, 1).unwrap();
    assert_eq!(tent[0].memory.created_at, 1_709_195_400_000);
    assert_eq!(tent[0].memory.session, "trip");
    assert_eq!(tent[0].memory.source, "imported");
}

#[test]
fn a_failed_import_writes_nothing() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    for i in 0..100 {
        let text = if i == 70 {
            "this one is POISON".to_string()
        } else {
            format!("note number {i}")
        };
        std::fs::write(notes.join(format!("{i:03}.txt")), text).unwrap();
    }
    let store = Store::open(&db).unwrap();
    store.remember("me", "", "already here").unwrap();
    // The disk refuses the 71st write (a trigger stands in for the failure).
    common::raw_connection(&db)
        .execute_batch(
            "CREATE TRIGGER poison BEFORE INSERT ON claim WHEN NEW.text LIKE '%POISON%'
             BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END;",
        )
        .unwrap();
    let e = exchange::import_paths(&store, &[notes.clone()], "me").unwrap_err();
    assert!(e.to_string().contains("refused"), "{e}");
    assert_eq!(store.count("me").unwrap(), 1, "nothing half-imported");
    // The CLI says so and exits 1.
    let out = cli(&db).arg("import").arg(&notes).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refused"));
    assert_eq!(store.count("me").unwrap(), 1);
}

#[test]
fn the_cli_edits_imports_and_exports() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("a.md"), "the blue flower pot is on the balcony").unwrap();
    std::fs::write(notes.join("b.txt"), "order part XK-4471").unwrap();
    std::fs::write(notes.join("c.pdf"), "no").unwrap();
    let out = cli(&db).arg("import").arg(&notes).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("imported 2, skipped 1"), "{stdout}");
    let out = cli(&db)
        .args(["edit", "1", "the red flower pot is on the balcony"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(&db)
        .args(["edit", "1", "--versions", "--json"])
        .output()
        .unwrap();
    let versions: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(versions[0]["text"], "the blue flower pot is on the balcony");
    let json = dir.path().join("out.json");
    let md = dir.path().join("md");
    assert!(cli(&db)
        .arg("export")
        .arg("--json")
        .arg(&json)
        .status()
        .unwrap()
        .success());
    assert!(cli(&db)
        .arg("export")
        .arg("--markdown")
        .arg(&md)
        .status()
        .unwrap()
        .success());
    assert_eq!(std::fs::read_dir(&md).unwrap().count(), 2);
    // The export imports into a new file with the edit history.
    let db2 = dir.path().join("m2.sqlite");
    let out = cli(&db2).arg("import").arg(&json).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("imported 2, skipped 0"));
    let out = cli(&db2)
        .args(["edit", "1", "--versions", "--json"])
        .output()
        .unwrap();
    let versions: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(versions.as_array().unwrap().len(), 1, "{versions}");
    // Bad input: an unknown id, an export with no target.
    assert!(!cli(&db)
        .args(["edit", "99", "x"])
        .status()
        .unwrap()
        .success());
    assert!(!cli(&db).arg("export").status().unwrap().success());
}

/// The review's first defect: a note's `audio:` named any file, and deleting the note deleted
/// it. Now only Umwelt's own recordings are linked; the rest is reported, and a delete or a
/// Forget everything leaves the user's files alone.
#[test]
fn an_imported_note_naming_a_file_of_the_users_never_deletes_it() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let taxes = home.join("taxes.pdf");
    std::fs::write(&taxes, b"the user's own").unwrap();
    let store = Store::open(dir.path().join("data").join("m.sqlite")).unwrap();
    let ours = store.recordings_dir().join("1700000000000.wav");
    std::fs::create_dir_all(store.recordings_dir()).unwrap();
    umwelt::audio::write_wav_16k_mono(&ours, &[0.0; 1600]).unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    let note = |name: &str, audio: &str| {
        std::fs::write(
            notes.join(name),
            format!("---\naudio: \"{audio}\"\n---\nnote {name}\n"),
        )
        .unwrap()
    };
    note("a.md", &taxes.to_string_lossy());
    note("b.md", ".bashrc");
    note(
        "c.md",
        &store
            .recordings_dir()
            .join("../../home/taxes.pdf")
            .to_string_lossy(),
    );
    note("d.md", &ours.to_string_lossy());
    note("e.md", &ours.to_string_lossy());
    let report = exchange::import_paths(&store, std::slice::from_ref(&notes), "me").unwrap();
    assert_eq!(report.imported.len(), 5, "{report:?}");
    assert_eq!(report.unlinked.len(), 4, "{report:?}");
    let linked: Vec<_> = report
        .imported
        .iter()
        .filter_map(|&id| store.get(id).unwrap().audio_path)
        .collect();
    assert_eq!(linked, vec![ours.to_string_lossy().into_owned()]);
    // A second import of the same note: the recording is already a memory's; the note still
    // comes in (before, it was dropped and reported as imported).
    let again = exchange::import_paths(&store, &[notes.join("d.md")], "me").unwrap();
    assert_eq!(again.imported.len(), 1, "{again:?}");
    assert!(
        again.unlinked[0].why.contains("already memory"),
        "{again:?}"
    );
    assert_ne!(again.imported[0], report.imported[3]);
    // A path stored before this check (by an older Umwelt) is not removed either.
    common::raw_connection(store.path())
        .execute(
            "UPDATE claim SET audio_path = ?1 WHERE id = ?2",
            rusqlite::params![taxes.to_string_lossy(), report.imported[0]],
        )
        .unwrap();
    store.delete(report.imported[0]).unwrap();
    store.forget("me").unwrap();
    assert_eq!(std::fs::read(&taxes).unwrap(), b"the user's own");
    assert!(
        !ours.exists(),
        "Umwelt's own recording goes with its memory"
    );

    // A dictation still waiting as a draft: its recording, its spool and the draft itself are
    // the draft's; a note that names them links none, and deleting the note leaves them.
    let pending = store.recordings_dir().join("1700000000001.wav");
    umwelt::audio::write_wav_16k_mono(&pending, &[0.0; 1600]).unwrap();
    let draft = store.recordings_dir().join("1700000000001.draft.json");
    std::fs::write(&draft, b"{}").unwrap();
    let spool = store.recordings_dir().join("1700000000002.spool");
    std::fs::write(&spool, b"spooled").unwrap();
    note("f.md", &pending.to_string_lossy());
    note("g.md", &draft.to_string_lossy());
    note("h.md", &spool.to_string_lossy());
    let names: Vec<_> = ["f.md", "g.md", "h.md"]
        .iter()
        .map(|n| notes.join(n))
        .collect();
    let drafts = exchange::import_paths(&store, &names, "me").unwrap();
    assert_eq!(drafts.imported.len(), 3, "{drafts:?}");
    assert_eq!(drafts.unlinked.len(), 3, "{drafts:?}");
    assert!(
        drafts.unlinked.iter().all(|u| u.why.contains("draft")),
        "{drafts:?}"
    );
    for id in &drafts.imported {
        assert_eq!(store.get(*id).unwrap().audio_path, None);
        store.delete(*id).unwrap();
    }
    assert!(
        pending.exists() && draft.exists() && spool.exists(),
        "a draft's files stay"
    );
    let e = store
        .recording_file(&taxes.to_string_lossy())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not in Umwelt's recordings folder"), "{e}");
}

/// Links that loop, a dangling link, a FIFO and a device in a folder: each skipped with the
/// reason, the rest imported, nothing hangs.
#[test]
fn a_folder_with_link_loops_a_fifo_and_a_dangling_link_imports_the_rest() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("sub")).unwrap();
    std::fs::write(notes.join("one.md"), "the first note").unwrap();
    std::fs::write(notes.join("sub").join("two.txt"), "the second note").unwrap();
    std::os::unix::fs::symlink(".", notes.join("loop-a")).unwrap();
    std::os::unix::fs::symlink("..", notes.join("sub").join("loop-b")).unwrap();
    std::os::unix::fs::symlink("nowhere.md", notes.join("dangling.md")).unwrap();
    let fifo = notes.join("pipe.md");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid path; mkfifo only makes a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let report =
        exchange::import_paths(&store, &[notes.clone(), "/dev/zero".into()], "me").unwrap();
    assert_eq!(report.imported.len(), 2, "{report:?}");
    let why = |name: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.path.ends_with(name))
            .map(|s| s.why.clone())
            .unwrap_or_else(|| panic!("{name} not reported: {report:?}"))
    };
    assert!(why("loop-a").contains("link"));
    assert!(why("loop-b").contains("link"));
    assert!(why("dangling.md").contains("link"));
    assert!(why("pipe.md").contains("not a regular file"));
    assert!(why("/dev/zero").contains("not a regular file"));
    // Cancel is seen while walking, before anything is read.
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let work = exchange::Work {
        progress: None,
        cancel: Some(&cancel),
    };
    let e = exchange::import_paths_with(&store, &[notes], "me", &work).unwrap_err();
    assert!(matches!(e, umwelt::Error::Cancelled), "{e}");
}

/// A JSON export with bad memories among good ones: the good ones come in, each bad one is
/// reported with its reason, before anything is embedded.
#[test]
fn a_json_import_skips_bad_memories_and_keeps_the_rest() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let good = |text: &str| {
        serde_json::json!({"id": 1, "text": text, "scope": "me", "session": "",
        "created_at": 1_700_000_000_000i64, "source": "typed", "audio_path": null})
    };
    let mut long_session = good("a long session");
    long_session["session"] = serde_json::json!("s".repeat(10_000));
    let json = serde_json::json!({"format": exchange::EXPORT_FORMAT, "exported_at": 1,
        "memories": [good("kept one"), good("   "), long_session, {"text": []}, good("kept two")]});
    let path = dir.path().join("export.json");
    std::fs::write(&path, json.to_string()).unwrap();
    let report = exchange::import_paths(&store, &[path], "me").unwrap();
    assert_eq!(report.imported.len(), 2, "{report:?}");
    assert_eq!(report.skipped.len(), 3, "{report:?}");
    assert!(
        report.skipped.iter().all(|s| s.path.contains("(memory ")),
        "{report:?}"
    );
}

/// The CLI's export refuses to replace a file unless told, and writes it private.
#[test]
fn the_cli_export_keeps_an_existing_file_unless_told_to_overwrite() {
    use std::os::unix::fs::PermissionsExt;
    let _process = common::shared();
    let (dir, db) = common::temp_db();
    Store::open(&db)
        .unwrap()
        .remember("me", "", "buy milk")
        .unwrap();
    let out = dir.path().join("umwelt.json");
    std::fs::write(&out, b"the user's file").unwrap();
    let run = |extra: &[&str]| {
        cli(&db)
            .args(["export", "--json"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = run(&[]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("already exists"));
    assert_eq!(std::fs::read(&out).unwrap(), b"the user's file");
    assert!(run(&["--overwrite"]).status.success());
    assert!(std::fs::read_to_string(&out).unwrap().contains("buy milk"));
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_markdown_export_into_a_folder_of_the_users_leaves_its_mode_and_files_alone() {
    use std::os::unix::fs::PermissionsExt;
    let _process = common::shared();
    let (dir, db) = common::temp_db();
    Store::open(&db)
        .unwrap()
        .remember("me", "", "buy milk")
        .unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let export = |to: &std::path::Path, extra: &[&str]| {
        cli(&db)
            .args(["export", "--markdown"])
            .arg(to)
            .args(extra)
            .output()
            .unwrap()
    };

    // The user's own folder (say ~/Documents, 0755): the notes go in, its mode stays.
    let documents = dir.path().join("Documents");
    std::fs::create_dir(&documents).unwrap();
    std::fs::set_permissions(&documents, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(documents.join("taxes.txt"), b"the user's").unwrap();
    let out = export(&documents, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&documents), 0o755, "the user's folder keeps its mode");
    let notes: Vec<_> = std::fs::read_dir(&documents)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(mode(&notes[0]), 0o600, "each note is private");
    assert_eq!(
        std::fs::read(documents.join("taxes.txt")).unwrap(),
        b"the user's"
    );

    // Again: the note is there, so nothing is written unless the user confirmed.
    std::fs::write(&notes[0], b"edited by the user").unwrap();
    let again = export(&documents, &[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(std::fs::read(&notes[0]).unwrap(), b"edited by the user");

    // A folder the export makes is the export's own: private.
    let fresh = dir.path().join("new export");
    assert!(export(&fresh, &[]).status.success());
    assert_eq!(mode(&fresh), 0o700);
}

/// Folders nested deeper than an import goes: the notes above the limit come in, the folder past
/// it is skipped with its reason.
#[test]
fn an_import_goes_only_so_many_folders_deep_and_says_where_it_stopped() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.sqlite")).unwrap();
    let notes = dir.path().join("notes");
    let mut deep = notes.clone();
    for level in 0..=exchange::MAX_DEPTH + 1 {
        deep = deep.join(format!("d{level}"));
        std::fs::create_dir_all(&deep).unwrap();
        if level == 2 || level == exchange::MAX_DEPTH + 1 {
            std::fs::write(deep.join("note.md"), format!("a note {level} folders down")).unwrap();
        }
    }
    let report = exchange::import_paths(&store, std::slice::from_ref(&notes), "me").unwrap();
    assert_eq!(report.imported.len(), 1, "{report:?}");
    assert!(store
        .get(report.imported[0])
        .unwrap()
        .text
        .contains("2 folders down"));
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.why.contains("folders deep")),
        "{report:?}"
    );
}
