//! Near-copies collapse: a person who writes "Drive Ben to the dentist check-up" every few
//! months should not get five of them as the five best answers. Walking the ranked candidates
//! best first, a candidate whose vector is a near-copy ([`NEAR_COPY`]) of a better one already
//! shown joins it as one of its "similar notes" instead of taking a place of its own. Used by
//! recall and by search, with the optimisations on and off alike (it is ranking, not speed).

use rusqlite::{params, OptionalExtension, Transaction};

use crate::embed::EMBED_DIM;
use crate::error::Result;

/// Two memories whose vectors are at least this similar (cosine) are near-copies: the same
/// note with a word or a date changed. Chosen on the committed retrieval set
/// (docs/PERFORMANCE.md, issue 35).
pub(super) const NEAR_COPY: f32 = 0.9;

/// A shown candidate (its index in the ranked list) and the near-copies it stands for, best
/// first (their indices).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    pub lead: usize,
    pub similar: Vec<usize>,
}

/// Group the ranked candidates `ids` (best first) of `holder`: each is a near-copy of the
/// first group whose leader it resembles, or leads a group of its own. At most `k` groups;
/// every candidate is looked at, so a group counts the near-copies among all of them.
/// A candidate without a vector (written meanwhile by another process) leads its own group.
pub(super) fn collapse(tx: &Transaction, ids: &[i64], k: usize) -> Result<Vec<Group>> {
    collapse_by(ids.len(), k, |i| vector(tx, ids[i]))
}

/// [`collapse`] with the vectors from `vector_of(i)`, the `i`th candidate's (`None`: it has
/// none).
pub(super) fn collapse_by(
    n: usize,
    k: usize,
    mut vector_of: impl FnMut(usize) -> Result<Option<Vec<f32>>>,
) -> Result<Vec<Group>> {
    let mut groups: Vec<(Group, Option<Vec<f32>>)> = Vec::with_capacity(k);
    for i in 0..n {
        let v = vector_of(i)?;
        let joined = v.as_ref().and_then(|v| {
            groups
                .iter()
                .position(|(_, lead)| lead.as_ref().is_some_and(|l| dot(l, v) >= NEAR_COPY))
        });
        match joined {
            Some(g) => groups[g].0.similar.push(i),
            None if groups.len() < k => groups.push((
                Group {
                    lead: i,
                    similar: Vec::new(),
                },
                v,
            )),
            None => {}
        }
    }
    Ok(groups.into_iter().map(|(g, _)| g).collect())
}

/// The cosine of two unit vectors, by the vector kernels (the portable ones with the
/// optimisations off): a recall compares each of its 50 candidates with up to `k` leaders, and
/// a plain loop's strict order of additions keeps the compiler from using vector registers.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    (crate::kernels::current().dot_f32)(a, b)
}

/// The stored vector of claim `id`, if it has one.
pub(super) fn vector(tx: &Transaction, id: i64) -> Result<Option<Vec<f32>>> {
    let mut st = tx.prepare_cached("SELECT embedding FROM claim_vector WHERE claim_id = ?1")?;
    let blob: Option<Vec<u8>> = st.query_row(params![id], |r| r.get(0)).optional()?;
    Ok(blob.filter(|b| b.len() == EMBED_DIM * 4).map(|b| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(angle: f32) -> Vec<f32> {
        vec![angle.cos(), angle.sin()]
    }

    #[test]
    fn near_copies_join_the_best_of_them_and_the_rest_keep_their_places() {
        // 0 and 2 are near-copies (cos 0.995), 1 is not near 0 (cos 0.5), 3 is near 1, 4 has no
        // vector.
        let v = [
            Some(unit(0.0)),
            Some(unit(1.047)),
            Some(unit(0.1)),
            Some(unit(1.1)),
            None,
        ];
        let groups = collapse_by(v.len(), 10, |i| Ok(v[i].clone())).unwrap();
        assert_eq!(
            groups,
            vec![
                Group {
                    lead: 0,
                    similar: vec![2]
                },
                Group {
                    lead: 1,
                    similar: vec![3]
                },
                Group {
                    lead: 4,
                    similar: vec![]
                },
            ]
        );
        // At most k groups, and the near-copies found after the k-th still join theirs.
        let groups = collapse_by(v.len(), 1, |i| Ok(v[i].clone())).unwrap();
        assert_eq!(
            groups,
            vec![Group {
                lead: 0,
                similar: vec![2]
            }]
        );
        // Below the threshold nothing joins.
        let far = [Some(unit(0.0)), Some(unit(0.5))];
        assert_eq!(collapse_by(2, 10, |i| Ok(far[i].clone())).unwrap().len(), 2);
    }
}
