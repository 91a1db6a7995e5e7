//! The best few of many scored candidates, without sorting them all: a heap that holds at most
//! `limit` of them and drops the worst whenever a better one comes.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// A candidate: its score and a key that is ascending in id (the id itself, or a number given
/// in id order), which breaks ties.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranked {
    /// Higher is better.
    pub(crate) score: f32,
    /// Lower wins a tie.
    pub(crate) key: u64,
}

impl Ranked {
    /// Whether `self` ranks before `other`: a higher score, or the same score and a lower key.
    fn is_better_than(&self, other: &Ranked) -> bool {
        self.cmp(other) == Ordering::Less
    }
}

/// Orders from best to worst, so that the largest in a `BinaryHeap` is the worst kept.
impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> Ordering {
        other.score.total_cmp(&self.score).then(self.key.cmp(&other.key))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// Keeps the `limit` best candidates offered to it.
#[derive(Debug)]
pub(crate) struct TopRanked {
    limit: usize,
    /// The kept candidates, the worst on top.
    heap: BinaryHeap<Ranked>,
}

impl TopRanked {
    /// Keeps at most `limit`; `expected` (how many candidates may come, if known) only bounds
    /// what is reserved up front, so a huge limit costs nothing.
    pub(crate) fn new(limit: usize, expected: usize) -> TopRanked {
        TopRanked { limit, heap: BinaryHeap::with_capacity(limit.min(expected).saturating_add(1)) }
    }

    /// Offers a candidate; it is kept if it is among the best `limit` so far.
    pub(crate) fn offer(&mut self, score: f32, key: u64) {
        // Adding zero turns -0.0 into 0.0, so that the two tie and the key decides.
        let candidate = Ranked { score: score + 0.0, key };
        if self.heap.len() < self.limit {
            self.heap.push(candidate);
        } else if self.heap.peek().is_some_and(|worst| candidate.is_better_than(worst)) {
            if let Some(mut worst) = self.heap.peek_mut() {
                *worst = candidate;
            }
        }
    }

    /// The kept candidates, best first.
    pub(crate) fn into_best_first(self) -> Vec<Ranked> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(top: TopRanked) -> Vec<u64> {
        top.into_best_first().iter().map(|ranked| ranked.key).collect()
    }

    #[test]
    fn keeps_the_best_in_order_and_breaks_ties_by_lower_key() {
        let mut top = TopRanked::new(3, 10);
        for (score, key) in [(0.5, 1), (0.9, 7), (0.5, 0), (0.1, 2), (0.9, 3), (0.7, 9)] {
            top.offer(score, key);
        }
        assert_eq!(keys(top), [3, 7, 9]);
    }

    #[test]
    fn a_limit_of_zero_keeps_nothing_and_a_huge_one_keeps_everything() {
        let mut nothing = TopRanked::new(0, 5);
        nothing.offer(1.0, 1);
        assert!(keys(nothing).is_empty());
        let mut everything = TopRanked::new(usize::MAX, 2);
        everything.offer(1.0, 4);
        everything.offer(2.0, 5);
        everything.offer(1.0, 3);
        assert_eq!(keys(everything), [5, 3, 4]);
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        let mut top = TopRanked::new(2, 2);
        top.offer(0.0, 2);
        top.offer(-0.0, 1);
        assert_eq!(keys(top), [1, 2]);
    }
}
