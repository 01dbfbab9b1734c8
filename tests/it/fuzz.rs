//! Hostile input at volume, for every parser of what comes from outside: the settings file, the
//! dashboard's JSON import, the spool reader, the WAV reader, the text handed to espeak-ng's
//! phonemizer over FFI, and search strings (hybrid search and recall). Each case must give a value or a clear error: no
//! panic, and what a refused input would have changed is unchanged. (The IPC commands' arguments
//! are fuzzed on the mock runtime in `src-tauri/tests/commands.rs`.)
//!
//! `UMWELT_FUZZ_CASES` sets the cases per parser (CI runs the defaults below; the recorded run in
//! docs/RELIABILITY.md used 1 000 000 each). Inputs come from `common::hostile`, seeded per
//! parser, so a failure names a case that reproduces.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use umwelt::bench;
use umwelt::perf_db::Runs;
use umwelt::settings::Settings;
use umwelt::speech::spool::{self, SpoolWriter};

use crate::common::{
    self,
    hostile::{cases, Hostile},
};

/// Run `case` for `n` cases; a panic fails the test with the parser's name and the case.
fn fuzz(name: &str, n: usize, seed: u64, mut case: impl FnMut(usize, &mut Hostile)) {
    let mut h = Hostile::new(seed);
    let t0 = std::time::Instant::now();
    for i in 0..n {
        if catch_unwind(AssertUnwindSafe(|| case(i, &mut h))).is_err() {
            panic!("{name}: case {i} (seed {seed}) panicked");
        }
    }
    eprintln!(
        "fuzz {name}: {n} cases, 0 panics, {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn the_settings_file_parser_takes_anything_and_keeps_only_valid_settings() {
    let _process = common::shared();
    let base = serde_json::to_value(Settings::default()).unwrap();
    let base_bytes = serde_json::to_vec(&base).unwrap();
    fuzz("settings", cases(100_000), 1, |i, h| {
        let bytes = match h.below(3) {
            0 => serde_json::to_vec(&h.mutate_json(i, &base)).unwrap(),
            1 => h.mutate_bytes(&base_bytes),
            _ => h.bytes(i),
        };
        if let Some((settings, _notes)) = Settings::parse(&bytes) {
            settings
                .validate()
                .unwrap_or_else(|e| panic!("parsed settings that do not validate: {e}"));
        }
    });
}

#[test]
fn the_dashboards_import_refuses_anything_that_is_not_a_report_and_keeps_nothing_of_it() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::open(&dir.path().join("perf.sqlite")).unwrap();
    let report = bench::Report {
        format: bench::REPORT_FORMAT.into(),
        started_at: 1,
        machine: bench::Machine::current(),
        command: "umwelt-cli bench --fast".into(),
        results: vec![bench::summarise(
            "recall",
            1000,
            "on",
            vec![1.0, 1.1],
            Some(0.3),
        )],
    };
    let base = serde_json::to_value(&report).unwrap();
    let base_text = base.to_string();
    let mut kept = 0;
    fuzz("dashboard import", cases(50_000), 2, |i, h| {
        let text = match h.below(3) {
            0 => h.mutate_json(i, &base).to_string(),
            1 => String::from_utf8_lossy(&h.mutate_bytes(base_text.as_bytes())).into_owned(),
            _ => h.string(i),
        };
        match runs.import(&text) {
            Ok(_) => kept += 1,
            // Refused: nothing kept.
            Err(_) => {}
        }
    });
    // Every kept run is one that was accepted: a refused import kept nothing.
    assert_eq!(runs.list().unwrap().len(), kept);
}

#[test]
fn the_spool_reader_reads_any_file_or_says_it_is_damaged() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let mut w = SpoolWriter::create(dir.path(), 16_000, None).unwrap();
    w.append(
        &(0..2_000)
            .map(|i| (i as f32 * 0.01).sin())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let good = w.path().to_path_buf();
    drop(w);
    let base = std::fs::read(&good).unwrap();
    let path = dir.path().join("case.spool");
    fuzz("spool reader", cases(20_000), 3, |i, h| {
        let bytes = if h.chance(4) {
            h.bytes(i)
        } else {
            h.mutate_bytes(&base)
        };
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(audio) = spool::read(&path, None) {
            assert_eq!(audio.samples.len(), (bytes.len() - 16) / 2);
            assert!(audio
                .samples
                .iter()
                .all(|s| s.is_finite() && s.abs() <= 1.01));
        }
    });
}

#[test]
fn the_wav_reader_reads_any_file_or_says_why_not() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.wav");
    let pcm: Vec<f32> = (0..4_000).map(|i| (i as f32 * 0.02).sin() * 0.5).collect();
    umwelt::audio::write_wav_16k_mono(&good, &pcm).unwrap();
    let base = std::fs::read(&good).unwrap();
    let path = dir.path().join("case.wav");
    fuzz("wav reader", cases(20_000), 4, |i, h| {
        let bytes = if h.chance(4) {
            h.bytes(i)
        } else {
            h.mutate_bytes(&base)
        };
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(samples) = umwelt::audio::read_wav_16k_mono(Path::new(&path)) {
            assert!(samples.iter().all(|s| s.is_finite()));
        }
    });
}

/// The opener of every audio file the user transcribes (symphonia's probe and decoders, then
/// Umwelt's rate checks and resampling), on WAV, FLAC and Ogg headers with hostile sample
/// rates, channel counts and lengths: samples or a clear error, never a panic or an abort.
#[test]
fn the_audio_opener_reads_any_file_or_says_why_not() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.wav");
    let pcm: Vec<f32> = (0..2_000).map(|i| (i as f32 * 0.05).sin() * 0.5).collect();
    umwelt::audio::write_wav_16k_mono(&good, &pcm).unwrap();
    let base = std::fs::read(&good).unwrap();
    let path = dir.path().join("case.wav");
    fuzz("audio opener", cases(20_000), 8, |i, h| {
        let mut bytes = if h.chance(5) {
            h.bytes(i)
        } else {
            h.mutate_bytes(&base)
        };
        // The sample rate (bytes 24..28) and channels (22..24) of the WAV header, often hostile.
        if bytes.len() >= 28 && h.chance(2) {
            let rate = [0u32, 1, 3_999, 384_001, u32::MAX, 4_294_967_291][h.below(6)];
            bytes[24..28].copy_from_slice(&rate.to_le_bytes());
        }
        if bytes.len() >= 24 && h.chance(4) {
            bytes[22..24].copy_from_slice(&(h.below(70_000) as u16).to_le_bytes());
        }
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(mut file) = umwelt::speech::file::AudioFile::open(&path) {
            // A few blocks: a hostile length must not make one block huge.
            for _ in 0..4 {
                match file.next_block() {
                    Ok(Some(block)) => assert!(block.iter().all(|s| s.is_finite())),
                    _ => break,
                }
            }
        }
    });
}

/// A note's front matter (what an import reads from any Markdown file): a note or nothing,
/// never a panic, and the text is never longer than what was given.
#[test]
fn the_markdown_front_matter_parser_takes_any_text() {
    let _process = common::shared();
    let base = "---\ncreated: 2026-12-01T15:41:45.120Z\nscope: \"me\"\nsession: \"a \\\"b\\\"\"\nsource: dictated\naudio: \"/x/recordings/1.wav\"\numwelt_id: 12\n---\nbuy oat milk\n";
    fuzz("markdown front matter", cases(200_000), 9, |i, h| {
        let text = match h.below(4) {
            0 => h.string(i),
            1 => String::from_utf8_lossy(&h.mutate_bytes(base.as_bytes())).into_owned(),
            2 => format!("---\ncreated: {}\n---\n{}", h.string(i), h.string(i + 1)),
            _ => format!("\u{feff}---\r\n{}: {}\r\n---", h.string(i), h.string(i + 1)),
        };
        let note = umwelt::exchange::markdown::parse(&text);
        assert!(note.text.len() <= text.len());
        if let Some(t) = note.created_at {
            assert!(umwelt::exchange::markdown::iso8601(t).len() >= 20);
        }
    });
}

#[test]
fn the_phonemizer_takes_any_text() {
    let _process = common::shared();
    use umwelt::voice::phonemes::{phonemize, to_kokoro, Dialect};
    fuzz("phonemizer (espeak-ng FFI)", cases(20_000), 5, |i, h| {
        // The voice is given at most a note's worth of text at a time; 10 MB strings go to the
        // store's length check, not to espeak-ng.
        let text = if i % common::hostile::HUGE_EVERY == common::hostile::HUGE_EVERY - 1 {
            h.string(0)
        } else {
            h.string(i)
        };
        let dialect = if h.chance(2) {
            Dialect::American
        } else {
            Dialect::British
        };
        if let Ok(clauses) = phonemize(&text, dialect) {
            for c in clauses {
                let _kokoro = to_kokoro(&c.phonemes, dialect);
            }
        }
    });
}

/// The two parsers a search string meets before the model: the full-text query (FTS5, through
/// `search_words`, which embeds nothing) and the embedder's tokenizer. Fast, so as many cases as
/// the other parsers; the whole search with the model is fuzzed below.
#[test]
fn a_search_string_is_always_text_to_fts5_and_the_tokenizer() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = umwelt::Store::open(dir.path().join("m.sqlite")).unwrap();
    for t in [
        "buy oat milk",
        "the dentist on Tuesday",
        "call mum \"NEAR\" the holiday: OR not",
    ] {
        store.remember("me", "", t).unwrap();
    }
    let embedder = store.embedder().get().unwrap();
    fuzz(
        "search strings (FTS5 and tokenizer)",
        cases(30_000),
        8,
        |i, h| {
            let q = h.string(i);
            match store.search_words(&q, "me", None, 10) {
                Ok(hits) => assert!(hits.len() <= 3),
                Err(e) => assert!(
                    matches!(e, umwelt::Error::InvalidInput(_)),
                    "a query is refused only as bad input, not: {e}"
                ),
            }
            if q.len() <= umwelt::store::MAX_TEXT_BYTES {
                embedder.encode(&[&q]).unwrap();
            }
        },
    );
    assert_eq!(store.count("me").unwrap(), 3);
}

#[test]
fn a_search_string_is_always_text() {
    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let store = umwelt::Store::open(dir.path().join("m.sqlite")).unwrap();
    for t in [
        "buy oat milk",
        "the dentist on Tuesday",
        "call mum about the holiday",
    ] {
        store.remember("me", "", t).unwrap();
    }
    // Each case embeds its query with the real model: fewer cases than the parsers above.
    let n = std::env::var("UMWELT_FUZZ_SEARCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    fuzz("search strings", n, 6, |i, h| {
        let q = h.string(i);
        // Hybrid search (FTS5 and meaning) and recall by meaning alone.
        let answers = [
            store.search(&q, "me", None, 10).map(|hits| hits.len()),
            store.recall(&q, "me", None, 10).map(|hits| hits.len()),
        ];
        for answer in answers {
            match answer {
                Ok(n) => assert!(n <= 3),
                Err(e) => assert!(
                    matches!(e, umwelt::Error::InvalidInput(_)),
                    "a query is refused only as bad input, not: {e}"
                ),
            }
        }
    });
    assert_eq!(store.count("me").unwrap(), 3);
}
