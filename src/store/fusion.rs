//! Ranking by words and meaning together. Reciprocal rank fusion makes one ranking of two
//! lists, the words (FTS5 bm25) and the meaning (vector similarity); the holdings engine's hybrid
//! search uses it, and memory search does when the model is not there:
//!
//! ```text
//! score = w / (RRF_K + keyword rank) + 1 / (RRF_K + meaning rank)     (ranks from 1; a list an
//!                                                                      item is not in adds 0)
//! ```
//!
//! Memory search by meaning scores each candidate by its similarity instead ([`by_meaning`]):
//! fused by rank, any note high in both lists (sharing one word, a little near in meaning)
//! outranked the note that means the question, whose words differ (docs/PERFORMANCE.md, issue
//! 35). In both, `w` ([`words_weight`]) is how much of the query's word evidence the item holds:
//! its bm25 over the bm25 a note holding every word of the query once would get, at most 1. A
//! note that shares only a word found in thousands of notes ("recommended", "the bill") holds
//! little of it; one that shares the query's rare words holds all of it.

/// The constant of reciprocal rank fusion (the usual 60: a rank-1 hit in one list is worth
/// about as much as a rank-2 hit in both).
pub const RRF_K: f32 = 60.0;

/// The fused score of an item at these 1-based ranks (`None`: not in that list), its words'
/// rank weighed by `words_weight` (0 to 1).
pub(crate) fn score(
    keyword_rank: Option<u32>,
    words_weight: f64,
    meaning_rank: Option<u32>,
) -> f64 {
    let part = |r: Option<u32>| r.map_or(0.0, |r| 1.0 / (f64::from(RRF_K) + f64::from(r)));
    words_weight * part(keyword_rank) + part(meaning_rank)
}

/// FTS5's inverse document frequency of a word found in `docs` of `total` rows (as its bm25
/// computes it: never below 10⁻⁶).
pub(crate) fn idf(docs: i64, total: i64) -> f64 {
    let (n, all) = (docs as f64, total.max(docs) as f64);
    ((all - n + 0.5) / (n + 0.5)).ln().max(1e-6)
}

/// The share of the query's word evidence a hit holds: its bm25 (FTS5's, negative) over the sum
/// of the idf of the query's words (`query_idf`, what a note of average length holding each
/// once would score), at most 1. A hit without a bm25 (a list ordered by age, of words too
/// common to weigh) counts fully, as do all hits of a query with no evidence to weigh.
pub(crate) fn words_weight(bm25: Option<f64>, query_idf: f64) -> f64 {
    match bm25 {
        Some(b) if query_idf > 0.0 => (-b / query_idf).clamp(0.0, 1.0),
        _ => 1.0,
    }
}

/// What sharing all the query's rare words is worth in a search by meaning, in similarity: a
/// name or a code the note holds lifts it above notes only a little nearer in meaning, while a
/// note that shares only common words gains almost nothing. Chosen on the committed retrieval
/// set (0.05, 0.1 and 0.2 measured alike there; the largest keeps names and codes strongest).
pub(crate) const WORDS_BONUS: f64 = 0.2;

/// A search hit's score by meaning: its `similarity` (0 if it has no vector) and `recency`,
/// plus [`WORDS_BONUS`] times its `words` weight if it shares words with the query.
pub(crate) fn by_meaning(similarity: Option<f32>, recency: f32, words: Option<f64>) -> f64 {
    f64::from(similarity.unwrap_or(0.0) + recency) + words.map_or(0.0, |w| WORDS_BONUS * w)
}

/// The `k` best of `(score, id, detail)`, best first; between equal scores the larger (newer)
/// id first, so a ranking never depends on a hash map's order.
pub(crate) fn best<Id: Ord, T>(mut items: Vec<(f64, Id, T)>, k: usize) -> Vec<(f64, Id, T)> {
    items.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    items.truncate(k);
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_place_in_one_list_is_worth_about_a_second_place_in_both() {
        assert!(score(Some(1), 1.0, None) > score(None, 1.0, Some(2)));
        let both = score(Some(2), 1.0, Some(2));
        assert!(both > score(Some(1), 1.0, None) && both < 2.0 * score(Some(1), 1.0, None));
        assert_eq!(score(None, 1.0, None), 0.0);
    }

    #[test]
    fn by_meaning_a_rare_shared_word_lifts_a_note_and_a_common_one_barely() {
        // Nearer in meaning, no shared words; a little less near, sharing the query's rare name.
        assert!(by_meaning(Some(0.45), 0.0, Some(1.0)) > by_meaning(Some(0.6), 0.0, None));
        // Sharing only a common word (weight 0.05) does not beat a clearly nearer note.
        assert!(by_meaning(Some(0.45), 0.0, Some(0.05)) < by_meaning(Some(0.5), 0.0, None));
        assert_eq!(by_meaning(None, 0.1, None), f64::from(0.1f32));
    }

    #[test]
    fn a_common_word_weighs_little_and_the_query_s_rare_words_fully() {
        // 10 000 notes: "recommended" in 2 000, "Okafor" in 12.
        let (common, rare) = (idf(2_000, 10_000), idf(12, 10_000));
        assert!(rare > 4.0 * common, "{rare} {common}");
        let query = common + rare;
        // A note holding only the common word, at the top of the words' list, is worth less
        // than one holding both at rank 10.
        let only_common = score(Some(1), words_weight(Some(-common), query), None);
        let both = score(Some(10), words_weight(Some(-query), query), None);
        assert!(both > only_common, "{both} {only_common}");
        assert_eq!(words_weight(Some(-2.0 * query), query), 1.0);
        assert_eq!(words_weight(None, query), 1.0);
        assert_eq!(words_weight(Some(-1.0), 0.0), 1.0);
        // A word in every row is no evidence, but never negative.
        assert_eq!(idf(10_000, 10_000), 1e-6);
    }

    #[test]
    fn the_best_come_first_and_ties_go_to_the_newer_id() {
        let got = best(vec![(0.5, 1, 'a'), (0.9, 2, 'b'), (0.5, 3, 'c')], 2);
        assert_eq!(got.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 3]);
    }
}
