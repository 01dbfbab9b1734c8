//! The committed retrieval set (benches/data/retrieval/, issue "Found among ten thousand"): big
//! enough to measure with, every question pointing at a target, and the distractors exactly what
//! their seeded generator writes.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::common;

fn read(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/data/retrieval")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn tsv(name: &str) -> Vec<(String, String)> {
    read(name)
        .lines()
        .map(|l| {
            let (id, text) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("{name}: no tab in {l:?}"));
            (id.to_string(), text.to_string())
        })
        .collect()
}

#[test]
fn the_set_has_ten_thousand_distractors_sixty_targets_and_two_questions_for_each() {
    let _process = common::shared();
    let targets: BTreeMap<String, String> = tsv("targets.tsv").into_iter().collect();
    assert!(targets.len() >= 60, "{} targets", targets.len());
    let questions = tsv("questions.tsv");
    assert!(questions.len() >= 120, "{} questions", questions.len());
    let mut asked: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, q) in &questions {
        assert!(
            targets.contains_key(id),
            "question {q:?} names no target ({id})"
        );
        assert!(!q.trim().is_empty());
        *asked.entry(id).or_default() += 1;
    }
    for id in targets.keys() {
        assert!(
            asked.get(id.as_str()).copied().unwrap_or(0) >= 2,
            "target {id} has fewer than two questions"
        );
    }
    // A question is not its target's text, or the set would measure word matching only.
    for (id, q) in &questions {
        assert_ne!(q.to_lowercase(), targets[id].to_lowercase());
    }
    let distractors = read("distractors.txt");
    let lines: Vec<&str> = distractors.lines().collect();
    assert!(lines.len() >= 10_000, "{} distractors", lines.len());
    let distinct: HashSet<&str> = lines.iter().copied().collect();
    assert_eq!(distinct.len(), lines.len(), "a distractor appears twice");
    for t in targets.values() {
        assert!(
            !distinct.contains(t.as_str()),
            "a distractor is a target: {t}"
        );
    }
}

#[test]
fn the_distractors_are_what_their_generator_writes() {
    let _process = common::shared();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("distractors.txt");
    let root = env!("CARGO_MANIFEST_DIR");
    let status = std::process::Command::new("python3")
        .arg(format!("{root}/scripts/retrieval-set.py"))
        .arg("--out")
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs");
    assert!(status.success());
    assert!(std::fs::read_to_string(&file).unwrap() == read("distractors.txt"), "the committed distractors differ from scripts/retrieval-set.py's; run it and commit the file");
}

/// The harness's quality scenarios build the set into a real memory file with the real model:
/// every target is there, once, with its own text; three years of notes end at the same moment
/// in every run; and among a few hundred distractors both retrievals find most questions' notes
/// (the scores at 10 000 are the harness's to measure, docs/PERFORMANCE.md).
#[test]
fn the_set_builds_into_a_memory_file_and_its_questions_are_scored() {
    use std::sync::atomic::AtomicBool;
    use umwelt::bench::retrieval_set::{quality, RetrievalSet, SCOPE};

    let _process = common::shared();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("set.sqlite");
    let set = RetrievalSet::committed();
    let embedder = umwelt::embed::Embedder::load().unwrap();
    let built = set
        .build(&path, 300, &embedder, &AtomicBool::new(false))
        .unwrap();
    assert_eq!(built.targets.len(), set.targets.len());
    let store = umwelt::store::Store::open(&path).unwrap();
    assert_eq!(store.count(SCOPE).unwrap(), 300 + set.targets.len());
    for (target, id) in &built.targets {
        let text = set.targets.iter().find(|(t, _)| t == target).unwrap().1;
        assert_eq!(store.get(*id).unwrap().text, text);
    }
    let now = RetrievalSet::asked_at();
    let (mut by_recall, mut by_search) = (Vec::new(), Vec::new());
    for q in &set.questions {
        let want = built.answer(q);
        let v = embedder.embed_one(q.text).unwrap();
        let rank = |ids: Vec<i64>| ids.iter().position(|&id| id == want).map(|r| r + 1);
        let hits = store.recall_vector(&v, SCOPE, None, 10, now).unwrap();
        assert!(hits.iter().all(|h| h.memory.created_at < now));
        by_recall.push(rank(hits.into_iter().map(|h| h.memory.id).collect()));
        let hits = store
            .search_with_vector(q.text, &v, SCOPE, None, 10, now)
            .unwrap();
        by_search.push(rank(hits.into_iter().map(|h| h.memory.id).collect()));
    }
    let (r, s) = (quality(&by_recall), quality(&by_search));
    eprintln!("300 distractors: recall {r:?}, search {s:?}");
    assert_eq!(r.questions, 120);
    assert!(r.recall_at_5 >= 0.8 && s.recall_at_5 >= 0.8, "{r:?} {s:?}");
}
