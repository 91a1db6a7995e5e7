//! Who was learned from whom, in reverse: the children of every node.
//!
//! Most edges sit in a compressed sparse row (4 bytes an edge, 4 a node); edges added since the
//! row was last built sit in an overflow of linked entries. The overflow is folded into the row
//! when it grows past half the row, so the fold's cost is spread thin over the edges that caused
//! it. A snapshot saves the row, so an open does not build it again.

use alloc::vec;
use alloc::vec::Vec;

use super::legs::parent_of;

use crate::convert::graph_position_u32;
use crate::corrupt_reason::CorruptReason;

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
    /// The parent of each edge of `overflow`, at the same index: a fold sorts the edges by
    /// parent in two passes whose reads do not wait on each other, where following each
    /// parent's list waited for every link in turn.
    overflow_parents: Vec<u32>,
}

impl Children {
    /// Records that `child` has `parent` in one of its legs (once per pair).
    pub fn link(&mut self, parent: u32, child: u32) {
        let edge = graph_position_u32(self.overflow.len());
        if self.overflow_heads.len() <= parent as usize {
            self.overflow_heads.resize(parent as usize + 1, NO_EDGE);
        }
        if let Some(head) = self.overflow_heads.get_mut(parent as usize) {
            self.overflow.push((child, *head));
            self.overflow_parents.push(parent);
            *head = edge;
        }
    }

    /// Whether the overflow has grown enough to fold into the row.
    pub fn wants_fold(&self) -> bool {
        self.overflow.len() > OVERFLOW_FLOOR_EDGES.max(self.row.len() / 2)
    }

    /// Folds the overflow into the row for `node_count` nodes. Each node's children come out
    /// ascending: the row holds older edges in order, and the overflow holds newer ones in the
    /// order they were linked (ascending by child: a child is always the newest node), which a
    /// stable sort of the overflow by parent keeps behind each parent's row. The sort is a count
    /// per parent, then a placement of each edge: neither pass waits on its last read.
    pub fn fold_overflow(&mut self, node_count: usize) {
        if self.overflow.is_empty() && self.row_offsets.len() == node_count + 1 {
            return;
        }
        // Each parent's place in the new row: its row, then its newer edges.
        let mut newer_counts = vec![0u32; node_count];
        for parent in &self.overflow_parents {
            if let Some(count) = newer_counts.get_mut(*parent as usize) {
                *count += 1;
            }
        }
        let mut row_offsets = Vec::with_capacity(node_count + 1);
        let mut row = vec![0u32; self.row.len() + self.overflow.len()];
        // Where the next newer edge of each parent goes, once its row is copied.
        let mut next_newer = newer_counts;
        let mut end = 0usize;
        row_offsets.push(0);
        for parent in 0..graph_position_u32(node_count) {
            let older = self.row_of(parent);
            if let Some(place) = row.get_mut(end..end + older.len()) {
                place.copy_from_slice(older);
            }
            end += older.len();
            let newer = next_newer.get(parent as usize).copied().unwrap_or(0) as usize;
            if let Some(next) = next_newer.get_mut(parent as usize) {
                *next = graph_position_u32(end);
            }
            end += newer;
            row_offsets.push(graph_position_u32(end));
        }
        for ((child, _), parent) in self.overflow.iter().zip(&self.overflow_parents) {
            if let Some(next) = next_newer.get_mut(*parent as usize) {
                if let Some(place) = row.get_mut(*next as usize) {
                    *place = *child;
                }
                *next += 1;
            }
        }
        row.truncate(end);
        self.row_offsets = row_offsets;
        self.row = row;
        self.overflow_heads = Vec::new();
        self.overflow = Vec::new();
        self.overflow_parents = Vec::new();
    }

    /// Children taken back from a snapshot's row, after checking what keeps every lookup
    /// inside it: one start per node and one more, ascending from zero to the row's end, every
    /// child a node. That the row agrees with the legs is what `verify` checks.
    pub fn from_row(node_count: usize, row_offsets: Vec<u32>, row: Vec<u32>) -> Result<Children, CorruptReason> {
        if row_offsets.len() != node_count + 1 || row_offsets.first() != Some(&0) {
            return Err(CorruptReason::SnapshotChildRowsDoNotMatchNodeCount);
        }
        if row_offsets.last().map(|last| *last as usize) != Some(row.len()) {
            return Err(CorruptReason::SnapshotChildRowsDoNotMatchEdgeCount);
        }
        let ascending = row_offsets.iter().zip(row_offsets.iter().skip(1)).fold(true, |ok, (a, b)| ok & (a <= b));
        if !ascending {
            return Err(CorruptReason::SnapshotChildRowsOutOfOrder);
        }
        if !row.iter().fold(true, |ok, child| ok & ((*child as usize) < node_count)) {
            return Err(CorruptReason::SnapshotNamesChildNotNode);
        }
        Ok(Children {
            row_offsets,
            row,
            overflow_heads: Vec::new(),
            overflow: Vec::new(),
            overflow_parents: Vec::new(),
        })
    }

    /// The row's starts and edges, for a snapshot; complete only after `fold_overflow`.
    pub fn row(&self) -> (&[u32], &[u32]) {
        debug_assert!(self.overflow.is_empty(), "the overflow must be folded before the row is saved");
        (&self.row_offsets, &self.row)
    }

    /// Whether both hold the same children for every node, in the same order.
    pub fn same_edges(&self, other: &Children, node_count: usize) -> bool {
        let mut mine = Vec::new();
        let mut theirs = Vec::new();
        (0..graph_position_u32(node_count)).all(|parent| {
            mine.clear();
            theirs.clear();
            self.for_each_ascending(parent, |child| mine.push(child));
            other.for_each_ascending(parent, |child| theirs.push(child));
            mine == theirs
        })
    }

    fn for_each_ascending(&self, parent: u32, mut visit: impl FnMut(u32)) {
        self.row_of(parent).iter().for_each(|child| visit(*child));
        let mut newer = Vec::new();
        self.for_each_newer(parent, |child| newer.push(child));
        newer.iter().rev().for_each(|child| visit(*child));
    }

    fn row_of(&self, parent: u32) -> &[u32] {
        let start = self.row_offsets.get(parent as usize).copied();
        let end = self.row_offsets.get(parent as usize + 1).copied();
        match (start, end) {
            (Some(start), Some(end)) => self.row.get(start as usize..end as usize).unwrap_or_default(),
            _ => &[],
        }
    }

    fn for_each_newer(&self, parent: u32, mut visit: impl FnMut(u32)) {
        let mut edge = self.overflow_heads.get(parent as usize).copied().unwrap_or(NO_EDGE);
        while let Some(&(child, next)) = self.overflow.get(edge as usize) {
            visit(child);
            edge = next;
        }
    }

    /// Calls `visit` with each child of `parent`.
    pub fn for_each(&self, parent: u32, mut visit: impl FnMut(u32)) {
        self.row_of(parent).iter().for_each(|child| visit(*child));
        self.for_each_newer(parent, visit);
    }

    /// Bytes of RAM held.
    pub fn heap_bytes(&self) -> usize {
        (self.row_offsets.capacity()
            + self.row.capacity()
            + self.overflow_heads.capacity()
            + self.overflow_parents.capacity())
            * 4
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

    /// Node 2 has parents 0 and 1, node 3 parent 0 twice (two legs), node 4 parents 2 and 0.
    fn linked(edges: &[(u32, &[u32])]) -> Children {
        let mut children = Children::default();
        for (child, parents) in edges {
            for_each_distinct_parent(parents, |parent| children.link(parent, *child));
        }
        children
    }

    const EDGES: [(u32, &[u32]); 3] = [(2, &[0, 1]), (3, &[0, 0]), (4, &[2, 0])];

    #[test]
    fn folding_keeps_every_child_in_ascending_order() {
        let mut children = linked(&EDGES[..2]);
        children.fold_overflow(4);
        for_each_distinct_parent(EDGES[2].1, |parent| children.link(parent, EDGES[2].0));
        let unfolded = children.clone();
        children.fold_overflow(5);
        assert_eq!(children.row(), (&[0, 3, 4, 5, 5, 5][..], &[2, 3, 4, 2, 4][..]));
        for parent in 0..5 {
            assert_eq!(collect(&children, parent), collect(&unfolded, parent), "parent {parent}");
        }
        assert!(children.same_edges(&unfolded, 5));
        assert!(!children.same_edges(&linked(&EDGES[..2]), 5));
    }

    #[test]
    fn folds_between_links_keep_each_parent_s_children_in_the_order_linked() {
        let mut random = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |bound: u32| {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            u32::try_from(random % u64::from(bound)).unwrap_or(0)
        };
        let mut children = Children::default();
        let mut expected: Vec<Vec<u32>> = vec![Vec::new()];
        for child in 1..3000u32 {
            expected.push(Vec::new());
            let mut parents: Vec<u32> = (0..1 + next(3)).map(|_| next(child)).collect();
            parents.sort_unstable();
            parents.dedup();
            for parent in parents {
                children.link(parent, child);
                expected[parent as usize].push(child);
            }
            if next(500) == 0 {
                children.fold_overflow(child as usize + 1);
            }
        }
        for parent in 0..3000u32 {
            assert_eq!(collect(&children, parent), expected[parent as usize], "before the last fold, {parent}");
        }
        children.fold_overflow(3000);
        for parent in 0..3000u32 {
            let mut found = Vec::new();
            children.for_each(parent, |child| found.push(child));
            assert_eq!(found, expected[parent as usize], "parent {parent}");
        }
    }

    #[test]
    fn a_saved_row_comes_back_and_a_bad_one_is_refused() {
        let mut children = linked(&EDGES);
        children.fold_overflow(5);
        let (offsets, row) = children.row();
        let back = Children::from_row(5, offsets.to_vec(), row.to_vec()).unwrap();
        assert!(back.same_edges(&children, 5));
        assert!(Children::from_row(4, offsets.to_vec(), row.to_vec()).is_err());
        assert!(Children::from_row(5, offsets.to_vec(), row[1..].to_vec()).is_err());
        assert!(Children::from_row(5, alloc::vec![0, 3, 2, 5, 5, 5], row.to_vec()).is_err());
        assert!(Children::from_row(5, offsets.to_vec(), alloc::vec![2, 3, 4, 2, 5]).is_err());
    }
}
