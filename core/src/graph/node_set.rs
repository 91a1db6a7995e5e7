//! A set of node indexes as one bit per node of the graph: a recall walk asks it about every
//! edge it follows, and a bit test is cheaper than hashing. It costs an eighth of a byte per
//! node, a small fraction of the graph itself, and only while a walk lasts.

use alloc::vec;
use alloc::vec::Vec;

/// Node indexes from `first` to a bound, both fixed at creation. A recall walk only ever meets
/// nodes after the ones it starts from (a memory names only earlier nodes), so a set from the
/// lowest of those costs the span the walk can reach, not the whole graph: a recall of recent
/// memories zeroes a few words rather than a bit per node of the agent.
pub struct NodeSet {
    first: u32,
    bits: Vec<u64>,
}

impl NodeSet {
    /// An empty set able to hold the indexes from `first` to below `node_count`. Indexes below
    /// `first` count as held: a walk never reaches them in a sound graph, and in a damaged one
    /// counting them as held keeps it from going round a loop.
    pub fn new(first: u32, node_count: usize) -> NodeSet {
        let span = node_count.saturating_sub(first as usize);
        NodeSet { first, bits: vec![0; span.div_ceil(64)] }
    }

    /// Where `index` sits in `bits`: its word and bit; `None` below `first`.
    fn position(&self, index: u32) -> Option<(usize, u64)> {
        let offset = index.checked_sub(self.first)?;
        Some((offset as usize / 64, 1u64 << (offset % 64)))
    }

    /// Adds `index`; returns whether it was new. An index past the bound, or below `first`, is
    /// never new.
    pub fn insert(&mut self, index: u32) -> bool {
        let Some((word, bit)) = self.position(index) else { return false };
        let Some(word) = self.bits.get_mut(word) else { return false };
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Whether `index` is in the set (every index below `first` is).
    pub fn contains(&self, index: u32) -> bool {
        match self.position(index) {
            Some((word, bit)) => self.bits.get(word).is_some_and(|word| word & bit != 0),
            None => true,
        }
    }

    /// Takes `index` out (one below `first` stays).
    pub fn remove(&mut self, index: u32) {
        if let Some((word, bit)) = self.position(index) {
            if let Some(word) = self.bits.get_mut(word) {
                *word &= !bit;
            }
        }
    }

    /// The indexes held from `low` to `high`, both included and neither below `first`,
    /// ascending. Its cost is a word per 64 indexes of the span, whatever the set holds.
    pub fn ascending(&self, low: u32, high: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.first;
        let low = low.max(first);
        let words = u32::try_from(self.bits.len()).unwrap_or(u32::MAX);
        let last_word = (high.saturating_sub(first) / 64).min(words.saturating_sub(1));
        let empty = high < low;
        ((low - first) / 64..=last_word)
            .filter(move |_| !empty)
            .flat_map(move |word_index| {
                let word = self.bits.get(word_index as usize).copied().unwrap_or(0);
                BitsOf(word).map(move |bit| first + word_index * 64 + bit)
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
        let mut set = NodeSet::new(0, 130);
        assert!(set.insert(0) && set.insert(63) && set.insert(64) && set.insert(129));
        assert!(!set.insert(64));
        assert!(set.contains(0) && set.contains(63) && set.contains(64) && set.contains(129));
        assert!(!set.contains(1) && !set.contains(65) && !set.contains(128));
        assert!(!set.insert(192));
        assert!(!set.contains(192));
    }

    #[test]
    fn gives_what_it_holds_in_a_span_ascending_and_forgets_what_is_removed() {
        let mut set = NodeSet::new(0, 300);
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

    #[test]
    fn a_set_from_a_first_index_holds_everything_below_it_and_spans_the_rest() {
        let mut set = NodeSet::new(1000, 1200);
        assert!(set.contains(3) && set.contains(999), "below the first: held");
        assert!(!set.insert(999));
        assert!(!set.contains(1000) && set.insert(1000) && set.insert(1063) && set.insert(1064) && set.insert(1199));
        assert!(!set.insert(1256), "past the last word");
        set.remove(1063);
        set.remove(5);
        assert!(set.contains(5));
        assert_eq!(set.ascending(0, 5000).collect::<Vec<_>>(), [1000, 1064, 1199]);
        assert_eq!(set.ascending(1001, 1198).collect::<Vec<_>>(), [1064]);
        assert_eq!(set.ascending(10, 20).count(), 0);
        assert_eq!(set.bits.len(), 4);
    }
}
