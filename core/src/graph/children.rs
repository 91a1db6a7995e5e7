//! Who was learned from whom, in reverse: the children of every node.
//!
//! Most edges sit in a compressed sparse row (4 bytes an edge, 4 a node), rebuilt from the legs
//! now and then; edges added since the last rebuild sit in an overflow of linked entries. A
//! rebuild happens when the overflow grows past half the row, so its cost is spread thin over the
//! edges that caused it.

use alloc::vec;
use alloc::vec::Vec;

use super::legs::parent_of;

const NO_EDGE: u32 = u32::MAX;
const OVERFLOW_FLOOR_EDGES: usize = 4096;

/// The children of every node.
#[derive(Debug, Default, Clone)]
pub struct Children {
    /// For nodes below `row_offsets.len() - 1`: children `row[row_offsets[i]..row_offsets[i + 1]]`.
    row_offsets: Vec<u32>,
    row: Vec<u32>,
    /// Newer edges: per parent (grown as needed), the first of a linked list in `overflow`.
    overflow_heads: Vec<u32>,
    overflow: Vec<(u32, u32)>,
}

impl Children {
    /// Records that `child` has `parent` in one of its legs (once per pair).
    pub fn link(&mut self, parent: u32, child: u32) {
        let edge = self.overflow.len() as u32;
        if self.overflow_heads.len() <= parent as usize {
            self.overflow_heads.resize(parent as usize + 1, NO_EDGE);
        }
        if let Some(head) = self.overflow_heads.get_mut(parent as usize) {
            self.overflow.push((child, *head));
            *head = edge;
        }
    }

    /// Whether the overflow has grown enough to fold into the row.
    pub fn wants_rebuild(&self) -> bool {
        self.overflow.len() > OVERFLOW_FLOOR_EDGES.max(self.row.len() / 2)
    }

    /// Rebuilds the row from every memory's legs, given as (child index, packed leg words).
    pub fn rebuild<'a>(&mut self, node_count: usize, memories: impl Iterator<Item = (u32, &'a [u32])> + Clone) {
        let mut counts = vec![0u32; node_count + 1];
        let mut edges = 0usize;
        for (_, words) in memories.clone() {
            for_each_distinct_parent(words, |parent| {
                if let Some(count) = counts.get_mut(parent as usize + 1) {
                    *count += 1;
                    edges += 1;
                }
            });
        }
        for index in 1..counts.len() {
            let before = counts.get(index - 1).copied().unwrap_or(0);
            if let Some(count) = counts.get_mut(index) {
                *count += before;
            }
        }
        let mut next_slot = counts.clone();
        let mut row = vec![0u32; edges];
        for (child, words) in memories {
            for_each_distinct_parent(words, |parent| {
                if let Some(slot) = next_slot.get_mut(parent as usize) {
                    if let Some(target) = row.get_mut(*slot as usize) {
                        *target = child;
                    }
                    *slot += 1;
                }
            });
        }
        self.row_offsets = counts;
        self.row = row;
        self.overflow_heads = Vec::new();
        self.overflow = Vec::new();
    }

    /// Calls `visit` with each child of `parent`.
    pub fn for_each(&self, parent: u32, mut visit: impl FnMut(u32)) {
        let start = self.row_offsets.get(parent as usize).copied();
        let end = self.row_offsets.get(parent as usize + 1).copied();
        if let (Some(start), Some(end)) = (start, end) {
            for child in self.row.get(start as usize..end as usize).unwrap_or_default() {
                visit(*child);
            }
        }
        let mut edge = self.overflow_heads.get(parent as usize).copied().unwrap_or(NO_EDGE);
        while let Some(&(child, next)) = self.overflow.get(edge as usize) {
            visit(child);
            edge = next;
        }
    }

    /// Bytes of RAM held.
    pub fn heap_bytes(&self) -> usize {
        (self.row_offsets.capacity() + self.row.capacity() + self.overflow_heads.capacity()) * 4
            + self.overflow.capacity() * 8
    }
}

/// Calls `visit` once with each distinct parent in a memory's packed words.
pub fn for_each_distinct_parent(words: &[u32], mut visit: impl FnMut(u32)) {
    for (position, word) in words.iter().enumerate() {
        let parent = parent_of(*word);
        let seen_before = words.get(..position).unwrap_or_default().iter().any(|earlier| parent_of(*earlier) == parent);
        if !seen_before {
            visit(parent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(children: &Children, parent: u32) -> Vec<u32> {
        let mut found = Vec::new();
        children.for_each(parent, |child| found.push(child));
        found.sort_unstable();
        found
    }

    #[test]
    fn overflow_and_row_agree() {
        // Node 2 has parents 0 and 1; node 3 has parent 0 twice (two legs).
        let legs: [(u32, Vec<u32>); 2] = [(2, alloc::vec![0, 1]), (3, alloc::vec![0, 0])];
        let mut linked = Children::default();
        for (child, parents) in &legs {
            for_each_distinct_parent(parents, |parent| linked.link(parent, *child));
        }
        let mut rebuilt = Children::default();
        rebuilt.rebuild(4, legs.iter().map(|(child, parents)| (*child, &parents[..])));
        for parent in 0..4 {
            assert_eq!(collect(&linked, parent), collect(&rebuilt, parent), "parent {parent}");
        }
        assert_eq!(collect(&rebuilt, 0), alloc::vec![2, 3]);
    }
}
