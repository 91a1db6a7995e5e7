//! A set of node indexes as one bit per node of the graph: a recall walk asks it about every
//! edge it follows, and a bit test is cheaper than hashing. It costs an eighth of a byte per
//! node, a small fraction of the graph itself, and only while a walk lasts.

use alloc::vec;
use alloc::vec::Vec;

/// Node indexes below a bound fixed at creation.
pub struct NodeSet {
    bits: Vec<u64>,
}

impl NodeSet {
    /// An empty set able to hold the indexes below `node_count`.
    pub fn new(node_count: usize) -> NodeSet {
        NodeSet { bits: vec![0; node_count.div_ceil(64)] }
    }

    /// Adds `index`; returns whether it was new. An index past the bound is never held.
    pub fn insert(&mut self, index: u32) -> bool {
        let Some(word) = self.bits.get_mut(index as usize / 64) else { return false };
        let bit = 1u64 << (index % 64);
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Whether `index` is in the set.
    pub fn contains(&self, index: u32) -> bool {
        self.bits.get(index as usize / 64).is_some_and(|word| word & (1u64 << (index % 64)) != 0)
    }

    /// Takes `index` out.
    pub fn remove(&mut self, index: u32) {
        if let Some(word) = self.bits.get_mut(index as usize / 64) {
            *word &= !(1u64 << (index % 64));
        }
    }

    /// The indexes held from `low` to `high`, both included, ascending. Its cost is a word per
    /// 64 indexes of the span, whatever the set holds.
    pub fn ascending(&self, low: u32, high: u32) -> impl Iterator<Item = u32> + '_ {
        let words = u32::try_from(self.bits.len()).unwrap_or(u32::MAX);
        let last_word = (high / 64).min(words.saturating_sub(1));
        (low / 64..=last_word)
            .flat_map(move |word_index| {
                let word = self.bits.get(word_index as usize).copied().unwrap_or(0);
                BitsOf(word).map(move |bit| word_index * 64 + bit)
            })
            .filter(move |index| (low..=high).contains(index))
    }
}

/// The set bits of one word, lowest first.
struct BitsOf(u64);

impl Iterator for BitsOf {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_was_inserted_and_nothing_past_its_bound() {
        let mut set = NodeSet::new(130);
        assert!(set.insert(0) && set.insert(63) && set.insert(64) && set.insert(129));
        assert!(!set.insert(64));
        assert!(set.contains(0) && set.contains(63) && set.contains(64) && set.contains(129));
        assert!(!set.contains(1) && !set.contains(65) && !set.contains(128));
        assert!(!set.insert(192));
        assert!(!set.contains(192));
    }

    #[test]
    fn gives_what_it_holds_in_a_span_ascending_and_forgets_what_is_removed() {
        let mut set = NodeSet::new(300);
        for index in [299, 5, 64, 63, 128, 200, 0] {
            set.insert(index);
        }
        set.remove(128);
        set.remove(7);
        assert_eq!(set.ascending(0, 299).collect::<Vec<_>>(), [0, 5, 63, 64, 200, 299]);
        assert_eq!(set.ascending(6, 199).collect::<Vec<_>>(), [63, 64]);
        assert_eq!(set.ascending(64, 64).collect::<Vec<_>>(), [64]);
        assert_eq!(set.ascending(250, 4000).collect::<Vec<_>>(), [299]);
        assert_eq!(set.ascending(5000, 6000).count(), 0);
        assert!(!set.contains(128));
    }
}
