//! The legs of every memory, packed into one vector of 32-bit words in id order.
//!
//! Each word is a parent's index (`id - 1`) in its low 30 bits; bit 30 marks the last parent of
//! a leg and bit 31 the last parent of the memory. Lots have no words. Where each node's words
//! end is kept for every node (4 bytes each), so finding them is two reads: a recall looks up
//! the legs of every memory it visits.

use alloc::vec::Vec;

use crate::convert::graph_position_u32;
use crate::corrupt_reason::CorruptReason;

const INDEX_MASK: u32 = (1 << 30) - 1;
const END_OF_LEG: u32 = 1 << 30;
const END_OF_MEMORY: u32 = 1 << 31;

/// The largest parent index the packing can hold.
pub const PARENT_INDEX_MAX: u32 = INDEX_MASK;

/// Packed legs and where each node's words end.
#[derive(Debug, Default, Clone)]
pub struct LegWords {
    words: Vec<u32>,
    /// For node `i`, the index just past its last word: its words start where node `i - 1`'s end.
    node_ends: Vec<u32>,
}

impl LegWords {
    /// Records a node without legs (a lot).
    pub fn push_lot(&mut self) {
        self.node_ends.push(graph_position_u32(self.words.len()));
    }

    /// Appends the legs of a memory and returns its words. Every leg must be non-empty and every
    /// index at most `PARENT_INDEX_MAX` (checked by the caller).
    pub fn push_legs<L, P>(&mut self, legs: L) -> &[u32]
    where
        L: IntoIterator<Item = P>,
        P: IntoIterator<Item = u32>,
    {
        let start = self.words.len();
        for leg in legs {
            let leg_start = self.words.len();
            self.words.extend(leg.into_iter().map(|index| index & INDEX_MASK));
            if self.words.len() > leg_start {
                if let Some(last) = self.words.last_mut() {
                    *last |= END_OF_LEG;
                }
            }
        }
        if self.words.len() > start {
            if let Some(last) = self.words.last_mut() {
                *last |= END_OF_MEMORY;
            }
        }
        self.node_ends.push(graph_position_u32(self.words.len()));
        self.words.get(start..).unwrap_or_default()
    }

    /// The words of node `index` (empty for a lot).
    pub fn of(&self, index: usize) -> &[u32] {
        let start = index.checked_sub(1).and_then(|before| self.node_ends.get(before)).copied().unwrap_or(0);
        let end = self.node_ends.get(index).copied().unwrap_or(start);
        self.words.get(start as usize..end as usize).unwrap_or_default()
    }

    /// Every packed word, in node order (for snapshots).
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Where each node's words end (for snapshots).
    pub fn node_ends(&self) -> &[u32] {
        &self.node_ends
    }

    /// Takes packed words and node ends back from a snapshot of `node_count` nodes, after
    /// checking what keeps every lookup inside the graph: one end per node, ascending and
    /// reaching exactly the last word, every parent a node of the graph. That the words agree
    /// with the log is what `verify` checks.
    pub fn from_parts(words: Vec<u32>, node_ends: Vec<u32>, node_count: usize) -> Result<LegWords, CorruptReason> {
        if node_ends.len() != node_count {
            return Err(CorruptReason::SnapshotLegEndsDoNotMatchNodeCount);
        }
        let ascending = node_ends.iter().zip(node_ends.iter().skip(1)).fold(true, |ok, (a, b)| ok & (a <= b));
        if !ascending || node_ends.last().map_or(0, |last| *last as usize) != words.len() {
            return Err(CorruptReason::SnapshotLegEndsOutOfOrder);
        }
        let parents_known = words.iter().fold(true, |ok, word| ok & ((parent_of(*word) as usize) < node_count));
        if !parents_known {
            return Err(CorruptReason::SnapshotNamesParentNotNode);
        }
        Ok(LegWords { words, node_ends })
    }

    /// Bytes of RAM held.
    pub fn heap_bytes(&self) -> usize {
        (self.words.capacity() + self.node_ends.capacity()) * 4
    }

    /// Gives back spare capacity.
    pub fn shrink(&mut self) {
        self.words.shrink_to_fit();
        self.node_ends.shrink_to_fit();
    }
}

/// The parent index a word holds.
pub fn parent_of(word: u32) -> u32 {
    word & INDEX_MASK
}

/// Whether a word ends its leg.
pub fn ends_leg(word: u32) -> bool {
    word & END_OF_LEG != 0
}

/// The legs in `words`, each as a slice of packed words.
pub fn split_legs(words: &[u32]) -> impl Iterator<Item = &[u32]> {
    words.split_inclusive(|word| ends_leg(*word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn words_of_each_node_come_back() {
        let mut legs = LegWords::default();
        let shapes: [Vec<Vec<u32>>; 4] = [vec![], vec![vec![0], vec![2, 0]], vec![], vec![vec![1, 2, 3]]];
        for shape in &shapes {
            if shape.is_empty() {
                legs.push_lot();
            } else {
                legs.push_legs(shape.iter().map(|leg| leg.iter().copied()));
            }
        }
        for (index, shape) in shapes.iter().enumerate() {
            let back: Vec<Vec<u32>> =
                split_legs(legs.of(index)).map(|leg| leg.iter().map(|word| parent_of(*word)).collect()).collect();
            assert_eq!(&back, shape, "node {index}");
        }
        assert_eq!(legs.of(4), &[] as &[u32]);
    }

    #[test]
    fn parts_that_reach_outside_the_words_are_refused() {
        let mut legs = LegWords::default();
        legs.push_lot();
        legs.push_legs([[0u32]]);
        let (words, ends) = (legs.words().to_vec(), legs.node_ends().to_vec());
        assert!(LegWords::from_parts(words.clone(), ends.clone(), 2).is_ok());
        assert!(LegWords::from_parts(words.clone(), ends.clone(), 3).is_err());
        assert!(LegWords::from_parts(words.clone(), vec![1, 0], 2).is_err());
        assert!(LegWords::from_parts(words.clone(), vec![0, 2], 2).is_err());
        assert!(LegWords::from_parts(vec![END_OF_MEMORY | END_OF_LEG | 2], ends, 2).is_err());
    }
}
