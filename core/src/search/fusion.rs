//! A simple first version, kept until the indexed one replaces it.
use super::Hit;
use crate::id::Id;
use alloc::vec::Vec;
pub const RECIPROCAL_RANK_K: f32 = 60.0;
pub fn reciprocal_rank_fusion(lists: &[&[Hit]], limit: usize) -> Vec<Hit> {
    let mut scores: alloc::collections::BTreeMap<u64, f32> = Default::default();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            *scores.entry(hit.id.get()).or_default() += 1.0 / (RECIPROCAL_RANK_K + rank as f32 + 1.0);
        }
    }
    let mut hits: Vec<Hit> = scores.into_iter().map(|(id, s)| Hit::new(Id::from(id), s)).collect();
    hits.sort_by(|a, b| {
        b.score.partial_cmp(&a.score).unwrap_or(core::cmp::Ordering::Equal).then(a.id.get().cmp(&b.id.get()))
    });
    hits.truncate(limit);
    hits
}
