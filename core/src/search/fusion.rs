//! Hybrid search: merging ranked lists by reciprocal rank fusion.
//!
//! Keyword and vector scores live on different scales, so rather than mixing scores the
//! fusion only uses ranks: an id gets 1 / (k + rank) from each list it is in. k = 60, the value
//! of the method's original paper, damps the weight of the very first ranks so that agreement
//! between lists counts more than the top place in one.

use alloc::vec::Vec;

use hashbrown::HashMap;

use super::hit::Hit;
use super::top::{Candidates, TopRanked};
use crate::id::Id;

/// The k of reciprocal rank fusion.
pub const RECIPROCAL_RANK_K: f32 = 60.0;

/// Fuses ranked lists (each best first) by reciprocal rank fusion: score(id) = sum over lists
/// of 1/(60 + rank), rank from 1; best first, ties ascending id; returns at most `limit`.
/// An id listed twice in one list counts once there, at its better rank.
pub fn reciprocal_rank_fusion(lists: &[&[Hit]], limit: usize) -> Vec<Hit> {
    if limit == 0 {
        return Vec::new();
    }
    // The fused score of each id, and the last list that added to it. Sums are kept in double
    // precision so that ids with the same ranks in a different order still tie once rounded.
    let mut fused: HashMap<u64, (f64, usize)> = HashMap::new();
    for (list_number, list) in lists.iter().enumerate() {
        for (rank, hit) in (1u32..).zip(list.iter()) {
            let share = 1.0 / (f64::from(RECIPROCAL_RANK_K) + f64::from(rank));
            let (score, last_list) = fused.entry(hit.id.get()).or_insert((0.0, usize::MAX));
            if *last_list != list_number {
                *score += share;
                *last_list = list_number;
            }
        }
    }
    let mut top = TopRanked::new(limit, fused.len());
    for (&id, &(score, _)) in &fused {
        top.offer(narrow(score), id);
    }
    top.into_best_first().into_iter().map(|ranked| Hit::new(Id::from(ranked.key), ranked.score)).collect()
}

/// A fused score in single precision, as a `Hit` holds it.
#[allow(clippy::cast_possible_truncation)]
fn narrow(score: f64) -> f32 {
    score as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[u64]) -> Vec<Hit> {
        ids.iter().map(|&id| Hit::new(Id::from(id), 1.0)).collect()
    }

    fn ids(hits: &[Hit]) -> Vec<u64> {
        hits.iter().map(|hit| hit.id.get()).collect()
    }

    #[test]
    fn agreement_between_lists_wins() {
        let keyword = hits(&[1, 2, 3]);
        let vector = hits(&[3, 4, 1]);
        let fused = reciprocal_rank_fusion(&[&keyword, &vector], 10);
        // 1: 1/61 + 1/63; 3: 1/63 + 1/61; both beat 2 (1/62) and 4 (1/62); ties by id.
        assert_eq!(ids(&fused), [1, 3, 2, 4]);
        let expected = 1.0 / 61.0 + 1.0 / 63.0;
        assert!((f64::from(fused[0].score) - expected).abs() < 1e-7);
        assert_eq!(fused[0].score, fused[1].score);
        assert!((f64::from(fused[2].score) - 1.0 / 62.0).abs() < 1e-7);
    }

    #[test]
    fn limits_empty_lists_and_repeats() {
        let keyword = hits(&[5, 6]);
        assert!(reciprocal_rank_fusion(&[&keyword], 0).is_empty());
        assert!(reciprocal_rank_fusion(&[], 10).is_empty());
        assert!(reciprocal_rank_fusion(&[&[], &[]], 10).is_empty());
        assert_eq!(ids(&reciprocal_rank_fusion(&[&keyword, &[]], 1)), [5]);
        let repeated = hits(&[7, 7, 8]);
        let fused = reciprocal_rank_fusion(&[&repeated], 10);
        assert_eq!(ids(&fused), [7, 8]);
        assert!((f64::from(fused[0].score) - 1.0 / 61.0).abs() < 1e-7);
    }

    #[test]
    fn one_list_keeps_its_order() {
        let keyword = hits(&[9, 2, 7, 1]);
        assert_eq!(ids(&reciprocal_rank_fusion(&[&keyword], 3)), [9, 2, 7]);
        let three = [hits(&[1, 2]), hits(&[2, 1]), hits(&[3])];
        let lists: Vec<&[Hit]> = three.iter().map(Vec::as_slice).collect();
        assert_eq!(ids(&reciprocal_rank_fusion(&lists, 10)), [1, 2, 3]);
    }
}
