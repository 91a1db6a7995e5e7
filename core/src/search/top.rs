//! The best few of many scored candidates, without sorting them all: a heap that holds at most
//! `limit` of them and drops the worst whenever a better one comes; or, when some candidates may
//! be turned away by a test only known once they are looked at, every candidate, taken best
//! first until enough pass.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::{Ordering, Reverse};

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
    fn new(score: f32, key: u64) -> Ranked {
        // Adding zero turns -0.0 into 0.0, so that the two tie and the key decides.
        Ranked { score: score + 0.0, key }
    }

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

/// Where a ranking puts the scored candidates it finds.
pub(crate) trait Candidates {
    /// Offers a candidate.
    fn offer(&mut self, score: f32, key: u64);
}

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

    /// The kept candidates, best first.
    pub(crate) fn into_best_first(self) -> Vec<Ranked> {
        self.heap.into_sorted_vec()
    }
}

impl Candidates for TopRanked {
    /// Keeps the candidate if it is among the best `limit` so far.
    fn offer(&mut self, score: f32, key: u64) {
        let candidate = Ranked::new(score, key);
        if self.heap.len() < self.limit {
            self.heap.push(candidate);
        } else if self.heap.peek().is_some_and(|worst| candidate.is_better_than(worst)) {
            if let Some(mut worst) = self.heap.peek_mut() {
                *worst = candidate;
            }
        }
    }
}

/// Every candidate offered, for a ranking that turns some away: they are ordered only as far as
/// they are taken, so a test that passes the first few costs one pass over the candidates and a
/// few steps of a heap, and the test is asked only of the candidates taken.
#[derive(Debug)]
pub(crate) struct AllRanked {
    candidates: Vec<Ranked>,
}

impl AllRanked {
    /// Room for `expected` candidates (how many may come, if known).
    pub(crate) fn new(expected: usize) -> AllRanked {
        AllRanked { candidates: Vec::with_capacity(expected) }
    }

    /// The best `limit` candidates that `keep` accepts, best first. `keep` is asked of the
    /// candidates in rank order only, until `limit` are kept or none is left; its first error
    /// ends the ranking.
    pub(crate) fn best_kept<E>(
        self,
        limit: usize,
        mut keep: impl FnMut(u64) -> Result<bool, E>,
    ) -> Result<Vec<Ranked>, E> {
        let mut kept = Vec::new();
        if limit == 0 {
            return Ok(kept);
        }
        // Made from the whole list at once, the heap costs one pass rather than a push each.
        let mut waiting: BinaryHeap<Reverse<Ranked>> =
            BinaryHeap::from(self.candidates.into_iter().map(Reverse).collect::<Vec<_>>());
        while kept.len() < limit {
            let Some(Reverse(best)) = waiting.pop() else { break };
            if keep(best.key)? {
                kept.push(best);
            }
        }
        Ok(kept)
    }
}

impl Candidates for AllRanked {
    fn offer(&mut self, score: f32, key: u64) {
        self.candidates.push(Ranked::new(score, key));
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

    fn kept_keys(all: AllRanked, limit: usize, keep: impl Fn(u64) -> bool) -> (Vec<u64>, Vec<u64>) {
        let mut asked = Vec::new();
        let kept = all.best_kept(limit, |key| -> Result<bool, ()> {
            asked.push(key);
            Ok(keep(key))
        });
        (kept.unwrap().iter().map(|ranked| ranked.key).collect(), asked)
    }

    #[test]
    fn all_ranked_asks_the_test_in_rank_order_only_until_the_page_is_full() {
        let offers = [(0.5, 1), (0.9, 7), (0.5, 0), (0.1, 2), (0.9, 3), (0.7, 9), (-0.0, 4), (0.0, 5)];
        let all = || {
            let mut all = AllRanked::new(0);
            offers.iter().for_each(|&(score, key)| all.offer(score, key));
            all
        };
        let (kept, asked) = kept_keys(all(), 2, |key| key % 3 != 0);
        assert_eq!((kept.as_slice(), asked.as_slice()), (&[7, 1][..], &[3, 7, 9, 0, 1][..]));
        let (kept, asked) = kept_keys(all(), 100, |_| true);
        assert_eq!(kept, [3, 7, 9, 0, 1, 2, 4, 5]);
        assert_eq!(asked, kept);
        let (kept, asked) = kept_keys(all(), 0, |_| true);
        assert!(kept.is_empty() && asked.is_empty());
        let mut failing = all();
        failing.offer(2.0, 8);
        assert_eq!(failing.best_kept(3, |key| if key == 8 { Err(key) } else { Ok(true) }), Err(8));
    }

    #[test]
    fn all_ranked_keeps_what_top_ranked_keeps_when_everything_passes() {
        let mut top = TopRanked::new(3, 10);
        let mut all = AllRanked::new(10);
        for (score, key) in [(0.5, 1), (0.9, 7), (0.5, 0), (0.1, 2), (0.9, 3), (0.7, 9)] {
            top.offer(score, key);
            all.offer(score, key);
        }
        assert_eq!(kept_keys(all, 3, |_| true).0, keys(top));
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        let mut top = TopRanked::new(2, 2);
        top.offer(0.0, 2);
        top.offer(-0.0, 1);
        assert_eq!(keys(top), [1, 2]);
    }
}
