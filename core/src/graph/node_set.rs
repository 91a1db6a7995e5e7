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
}
