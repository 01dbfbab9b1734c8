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
