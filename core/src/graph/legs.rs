//! The legs of every memory, packed into one vector of 32-bit words in id order.
//!
//! Each word is a parent's index (`id - 1`) in its low 30 bits; bit 30 marks the last parent of
//! a leg and bit 31 the last parent of the memory. Lots have no words. To find a node's words
//! without a per-node pointer, the index of the first word of every block of 64 nodes is kept,
//! and the few nodes before it in its block are skipped.

use alloc::vec::Vec;

const INDEX_MASK: u32 = (1 << 30) - 1;
const END_OF_LEG: u32 = 1 << 30;
const END_OF_MEMORY: u32 = 1 << 31;
/// Nodes per block of the word index: finding a node's words reads at most the words of the
/// nodes before it in its block.
pub const BLOCK_NODES: usize = 16;

/// The largest parent index the packing can hold.
pub const PARENT_INDEX_MAX: u32 = INDEX_MASK;

/// Packed legs with a block index.
#[derive(Debug, Default, Clone)]
pub struct LegWords {
    words: Vec<u32>,
    /// The first word of each block of `BLOCK_NODES` nodes.
    block_starts: Vec<u32>,
}

impl LegWords {
    /// Starts the words of node `index` (called for every node, lots included, in order).
    pub fn begin_node(&mut self, index: usize) {
        if index % BLOCK_NODES == 0 {
            self.block_starts.push(self.words.len() as u32);
        }
    }

    /// Appends the legs of the memory just begun and returns its words. Every leg must be
    /// non-empty and every index at most `PARENT_INDEX_MAX` (checked by the caller).
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
        self.words.get(start..).unwrap_or_default()
    }

    /// The words of node `index`, given which nodes are memories.
    pub fn of(&self, index: usize, is_memory: impl Fn(usize) -> bool) -> &[u32] {
        let block = index / BLOCK_NODES;
        let Some(&start) = self.block_starts.get(block) else { return &[] };
        let mut position = start as usize;
        for earlier in block * BLOCK_NODES..index {
            if is_memory(earlier) {
                position = self.end_of_memory(position);
            }
        }
        if !is_memory(index) {
            return &[];
        }
        let end = self.end_of_memory(position);
        self.words.get(position..end).unwrap_or_default()
    }

    fn end_of_memory(&self, start: usize) -> usize {
        let rest = self.words.get(start..).unwrap_or_default();
        rest.iter().position(|word| word & END_OF_MEMORY != 0).map_or(self.words.len(), |offset| start + offset + 1)
    }

    /// Every packed word, in node order (for snapshots).
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The first word of each block of `BLOCK_NODES` nodes (for snapshots).
    pub fn block_starts(&self) -> &[u32] {
        &self.block_starts
    }

    /// Takes packed words and block starts back from a snapshot of `node_count` nodes, after
    /// checking what keeps every lookup inside the graph: one block start per block, ascending
    /// from zero and within the words, every parent a node of the graph. That the words agree
    /// with the log is what `verify` checks.
    pub fn from_parts(words: Vec<u32>, block_starts: Vec<u32>, node_count: usize) -> Result<LegWords, &'static str> {
        if block_starts.len() != node_count.div_ceil(BLOCK_NODES) {
            return Err("snapshot leg blocks do not match its node count");
        }
        if !block_starts.is_empty() && block_starts.first() != Some(&0) {
            return Err("snapshot leg blocks do not start at the first word");
        }
        let ascending = block_starts.iter().zip(block_starts.iter().skip(1)).fold(true, |ok, (a, b)| ok & (a <= b));
        if !ascending || block_starts.last().is_some_and(|last| *last as usize > words.len()) {
            return Err("snapshot leg blocks out of order");
        }
        let parents_known = words.iter().fold(true, |ok, word| ok & ((parent_of(*word) as usize) < node_count));
        if !parents_known {
            return Err("snapshot names a parent that is not a node");
        }
        Ok(LegWords { words, block_starts })
    }

    /// Bytes of RAM held.
    pub fn heap_bytes(&self) -> usize {
        (self.words.capacity() + self.block_starts.capacity()) * 4
    }

    /// Gives back spare capacity.
    pub fn shrink(&mut self) {
        self.words.shrink_to_fit();
        self.block_starts.shrink_to_fit();
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
        let memories = [false, true, false, true];
        let shapes: [Vec<Vec<u32>>; 4] = [vec![], vec![vec![0], vec![2, 0]], vec![], vec![vec![1, 2, 3]]];
        for (index, shape) in shapes.iter().enumerate() {
            legs.begin_node(index);
            legs.push_legs(shape.iter().map(|leg| leg.iter().copied()));
        }
        let is_memory = |index: usize| memories[index];
        for (index, shape) in shapes.iter().enumerate() {
            let back: Vec<Vec<u32>> = split_legs(legs.of(index, is_memory))
                .map(|leg| leg.iter().map(|word| parent_of(*word)).collect())
                .collect();
            assert_eq!(&back, shape, "node {index}");
        }
    }

    #[test]
    fn blocks_are_found_past_the_first() {
        let mut legs = LegWords::default();
        for index in 0..200usize {
            legs.begin_node(index);
            legs.push_legs([[index as u32 % 7]]);
        }
        for index in [0usize, 63, 64, 65, 199] {
            let words = legs.of(index, |_| true);
            assert_eq!(words.len(), 1);
            assert_eq!(parent_of(words[0]), index as u32 % 7);
        }
    }
}
