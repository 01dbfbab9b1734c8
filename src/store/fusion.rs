//! Reciprocal rank fusion: one ranking made of two, the words (FTS5 bm25) and the meaning
//! (vector similarity). Used by memory search ([`super::Store::search`]) and by the holdings
//! engine's hybrid search, so both rank the same way:
//!
//! ```text
//! score = 1 / (RRF_K + keyword rank) + 1 / (RRF_K + meaning rank)     (ranks from 1; a list an
//!                                                                      item is not in adds 0)
//! ```

/// The constant of reciprocal rank fusion (the usual 60: a rank-1 hit in one list is worth
/// about as much as a rank-2 hit in both).
pub const RRF_K: f32 = 60.0;

/// The fused score of an item at these 1-based ranks (`None`: not in that list).
pub(crate) fn score(keyword_rank: Option<u32>, meaning_rank: Option<u32>) -> f64 {
    let part = |r: Option<u32>| r.map_or(0.0, |r| 1.0 / (f64::from(RRF_K) + f64::from(r)));
    part(keyword_rank) + part(meaning_rank)
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
        assert!(score(Some(1), None) > score(None, Some(2)));
        let both = score(Some(2), Some(2));
        assert!(both > score(Some(1), None) && both < 2.0 * score(Some(1), None));
        assert_eq!(score(None, None), 0.0);
    }

    #[test]
    fn the_best_come_first_and_ties_go_to_the_newer_id() {
        let got = best(vec![(0.5, 1, 'a'), (0.9, 2, 'b'), (0.5, 3, 'c')], 2);
        assert_eq!(got.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2, 3]);
    }
}
