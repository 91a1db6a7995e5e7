//! The recall graph in RAM: every lot and memory of one agent, its legs, its children and where
//! its record lies on disk.
//!
//! A node costs one 64-bit word (record location and flags), its legs one 32-bit word per
//! parent, and its child edges 4 bytes each once folded into the row. Nothing is allocated per
//! node, and content is never held: `get` reads it from disk.

mod children;
mod legs;
mod node_set;
mod recall;

pub use recall::RecallPlan;

use alloc::vec::Vec;

use children::{for_each_distinct_parent, Children};
use legs::{parent_of, split_legs, LegWords, PARENT_INDEX_MAX};

use crate::convert::{
    graph_position_u32, low_u16, low_u32, low_u8, node_index_or_none_u32, node_index_u32, segment_number_u16,
    segment_offset_u32,
};
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::error_facts::Limit;
use crate::id::Id;

/// The most nodes one graph holds: the agent's limit, which parent indexes packed into 30 bits
/// must be able to reach.
pub const NODES_MAX: u64 = crate::limits::NODES_PER_AGENT_MAX;
const _: () = assert!(NODES_MAX <= PARENT_INDEX_MAX as u64);

const FLAG_MEMORY: u8 = 1;
const FLAG_ALIVE: u8 = 2;
/// An Erase covered this node: its text must not stay in any file.
const FLAG_ERASE: u8 = 4;
/// The node's record in the files still holds its content.
const FLAG_CONTENT_ON_DISK: u8 = 8;
/// One of the node's parents is dead: only then can a Fair recall find one of its legs broken
/// before it began, so only then does it look its parents up.
const FLAG_PARENT_DEAD: u8 = 16;
/// A vector record of the node in the files still holds the vector's numbers.
const FLAG_VECTOR_ON_DISK: u8 = 32;
/// The node stands for a node of a space (its record is a shared node, with no content).
const FLAG_SHARED: u8 = 64;

const SEGMENT_SHIFT: u32 = 32;
const FLAGS_SHIFT: u32 = 48;

/// Where a record lies: segment number and byte offset in that segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The segment number (at most 65,535).
    pub segment: u16,
    /// The record's offset in the segment file.
    pub offset: u32,
}

impl Location {
    /// The location of a record at byte `offset` of segment `segment`.
    ///
    /// # Errors
    ///
    /// `Internal` if either number is past the limit that makes it fit its field (see the
    /// segment and offset conversions), which the limits on segments rule out.
    pub fn in_segment(segment: u64, offset: u64) -> Result<Location, Error> {
        Ok(Location { segment: segment_number_u16(segment)?, offset: segment_offset_u32(offset)? })
    }
}

fn pack(location: Location, flags: u8) -> u64 {
    u64::from(location.offset) | (u64::from(location.segment) << SEGMENT_SHIFT) | (u64::from(flags) << FLAGS_SHIFT)
}

fn unpack_location(slot: u64) -> Location {
    Location { offset: low_u32(slot), segment: low_u16(slot >> SEGMENT_SHIFT) }
}

fn unpack_flags(slot: u64) -> u8 {
    low_u8(slot >> FLAGS_SHIFT)
}

/// Whether a node is a lot, a memory or a shared node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A source.
    Lot,
    /// A memory.
    Memory,
    /// A node of a space that the agent's memories may name as a parent.
    Shared,
}

fn kind_of_flags(flags: u8) -> Kind {
    if flags & FLAG_MEMORY != 0 {
        Kind::Memory
    } else if flags & FLAG_SHARED != 0 {
        Kind::Shared
    } else {
        Kind::Lot
    }
}

/// A graph's parts as a snapshot saves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphParts<'a> {
    /// One word per node: record location and flags.
    pub slots: &'a [u64],
    /// Every memory's legs, packed, in node order.
    pub leg_words: &'a [u32],
    /// Where each node's leg words end in `leg_words`.
    pub leg_node_ends: &'a [u32],
    /// Where each node's children start in `child_row` (one more than the nodes).
    pub child_row_starts: &'a [u32],
    /// Every node's children, ascending, node after node.
    pub child_row: &'a [u32],
}

/// The graph of one agent.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    slots: Vec<u64>,
    legs: LegWords,
    children: Children,
    /// While many nodes are loaded at once, child edges stay in the overflow until `settle`.
    deferring_folds: bool,
    /// How many nodes hold text a compaction would take out, kept in step with the flags so
    /// that asking after every recall costs nothing.
    doomed_text: u64,
}

impl Graph {
    /// How many nodes were ever added.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Whether no node was ever added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The id the next node gets.
    #[must_use]
    pub fn next_id(&self) -> u64 {
        self.len() + 1
    }

    /// Bytes of RAM the graph holds (capacities of its vectors), for measurements.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 8 + self.legs.heap_bytes() + self.children.heap_bytes()
    }

    fn index(&self, id: u64) -> Option<usize> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        (index < self.slots.len()).then_some(index)
    }

    fn slot(&self, id: u64) -> Result<u64, Error> {
        // Built only when needed: an error dropped unused on every lookup costs a recall dearly.
        self.index(id)
            .and_then(|index| self.slots.get(index).copied())
            .ok_or_else(|| Error::UnknownId { id: Id::from(id) })
    }

    fn flags_of_index(&self, index: u32) -> u8 {
        self.slots.get(index as usize).map_or(0, |slot| unpack_flags(*slot))
    }

    fn update_flags(&mut self, id: u64, change: impl FnOnce(u8) -> u8) {
        if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
            let before = unpack_flags(*slot);
            let after = change(before);
            *slot = pack(unpack_location(*slot), after);
            self.doomed_text = counted(self.doomed_text, before, after);
        }
    }

    /// How many nodes hold text a compaction would take out: `content_to_remove(true)`,
    /// counted.
    #[must_use]
    pub fn doomed_text_count(&self) -> u64 {
        debug_assert_eq!(self.doomed_text, self.content_to_remove(true).count() as u64);
        self.doomed_text
    }

    /// The packed leg words of node `index` (empty for a lot).
    fn words_of(&self, index: u32) -> &[u32] {
        self.legs.of(index as usize)
    }

    /// Whether `id` is a node that is alive.
    #[must_use]
    pub fn is_alive(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_ALIVE != 0)
    }

    /// The kind of `id`.
    pub fn kind(&self, id: u64) -> Result<Kind, Error> {
        Ok(kind_of_flags(unpack_flags(self.slot(id)?)))
    }

    /// Where the record of `id` lies.
    pub fn location(&self, id: u64) -> Result<Location, Error> {
        Ok(unpack_location(self.slot(id)?))
    }

    /// Moves the record of `id` (after a segment was rewritten).
    pub fn set_location(&mut self, id: u64, location: Location, content_on_disk: bool) {
        if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
            let before = unpack_flags(*slot);
            let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
            let after = (before & !FLAG_CONTENT_ON_DISK) | disk;
            *slot = pack(location, after);
            self.doomed_text = counted(self.doomed_text, before, after);
        }
    }

    /// Whether an Erase covered `id`.
    #[must_use]
    pub fn is_erase_requested(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_ERASE != 0)
    }

    /// Whether the record of `id` in the files still holds its content.
    #[must_use]
    pub fn is_content_on_disk(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_CONTENT_ON_DISK != 0)
    }

    /// Whether a vector record of `id` in the files may still hold the vector's numbers.
    pub fn is_vector_on_disk(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_VECTOR_ON_DISK != 0)
    }

    /// Records whether a vector record of `id` in the files still holds the vector's numbers.
    pub fn set_vector_on_disk(&mut self, id: u64, on_disk: bool) {
        self.update_flags(id, |flags| if on_disk { flags | FLAG_VECTOR_ON_DISK } else { flags & !FLAG_VECTOR_ON_DISK });
    }

    /// Ids whose vector records may still hold numbers that must go: covered by an Erase, or
    /// dead when `all_dead` (compaction).
    pub fn vectors_to_remove(&self, all_dead: bool) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let flags = unpack_flags(*slot);
            let on_disk = flags & FLAG_VECTOR_ON_DISK != 0;
            let doomed = flags & FLAG_ERASE != 0 || (all_dead && flags & FLAG_ALIVE == 0);
            (on_disk && doomed).then_some(index as u64 + 1)
        })
    }

    /// Marks `ids` as covered by an Erase.
    pub fn request_erase(&mut self, ids: impl IntoIterator<Item = u64>) {
        for id in ids {
            self.update_flags(id, |flags| flags | FLAG_ERASE);
        }
    }

    /// Checks that `id` may be a parent of a new memory: known and alive.
    pub fn check_parent(&self, id: u64) -> Result<(), Error> {
        if unpack_flags(self.slot(id)?) & FLAG_ALIVE == 0 {
            return Err(Error::DeadParent { id: Id::from(id) });
        }
        Ok(())
    }

    fn push_slot(&mut self, flags: u8, location: Location) -> Result<u64, Error> {
        if self.len() >= NODES_MAX {
            return Err(Error::LimitExceeded { what: Limit::NodesPerAgent, size: self.len() + 1, limit: NODES_MAX });
        }
        self.slots.push(pack(location, flags));
        Ok(self.len())
    }

    /// Adds a lot; returns its id.
    pub fn add_lot(&mut self, location: Location, content_on_disk: bool) -> Result<u64, Error> {
        let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
        let id = self.push_slot(FLAG_ALIVE | disk, location)?;
        self.legs.push_lot();
        Ok(id)
    }

    /// Adds a shared node (a parent without content, rooted in a space); returns its id.
    pub fn add_shared(&mut self, location: Location) -> Result<u64, Error> {
        let id = self.push_slot(FLAG_SHARED | FLAG_ALIVE, location)?;
        self.legs.push_lot();
        Ok(id)
    }

    /// Adds a memory whose legs were checked (at least one, none empty, every parent known and
    /// alive); returns its id.
    pub fn add_memory<L, P>(&mut self, legs: L, location: Location, content_on_disk: bool) -> Result<u64, Error>
    where
        L: IntoIterator<Item = P>,
        P: IntoIterator<Item = u64>,
    {
        let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
        let id = self.push_slot(FLAG_MEMORY | FLAG_ALIVE | disk, location)?;
        let child = node_index_u32(id)?;
        let words = self.legs.push_legs(legs.into_iter().map(|leg| leg.into_iter().map(node_index_or_none_u32)));
        let children = &mut self.children;
        for_each_distinct_parent(words, |parent| children.link(parent, child));
        if !self.deferring_folds && self.children.wants_fold() {
            self.children.fold_overflow(self.slots.len());
        }
        Ok(id)
    }

    /// Keeps new child edges in the overflow until `settle`: for loading many nodes at once,
    /// where one fold at the end costs less than many along the way.
    pub fn defer_folds(&mut self) {
        self.deferring_folds = true;
    }

    /// Folds every child edge into the compact row and gives back spare capacity: call after
    /// loading many nodes at once, and before saving the parts.
    pub fn settle(&mut self) {
        self.deferring_folds = false;
        self.children.fold_overflow(self.slots.len());
        self.slots.shrink_to_fit();
        self.legs.shrink();
    }

    /// Folds every child edge into the compact row, so that `parts` holds them all.
    pub fn fold_children(&mut self) {
        self.children.fold_overflow(self.slots.len());
    }

    /// The graph's parts, for a snapshot: node slots, packed leg words, child row starts and
    /// child row. Call `fold_children` or `settle` first, so that every child edge is in the row.
    #[must_use]
    pub fn parts(&self) -> GraphParts<'_> {
        let (child_row_starts, child_row) = self.children.row();
        GraphParts {
            slots: &self.slots,
            leg_words: self.legs.words(),
            leg_node_ends: self.legs.node_ends(),
            child_row_starts,
            child_row,
        }
    }

    /// A graph taken back from a snapshot's parts, after checking what keeps every lookup
    /// inside the graph. Whether the parts tell the truth about the log is what `verify`
    /// checks, by building the graph again from the log and comparing (`same_as`).
    pub fn from_parts(
        slots: Vec<u64>,
        leg_words: Vec<u32>,
        leg_node_ends: Vec<u32>,
        child_row_starts: Vec<u32>,
        child_row: Vec<u32>,
    ) -> Result<Graph, CorruptReason> {
        if slots.len() as u64 > NODES_MAX {
            return Err(CorruptReason::SnapshotHoldsTooManyNodes);
        }
        let known = FLAG_MEMORY
            | FLAG_ALIVE
            | FLAG_ERASE
            | FLAG_CONTENT_ON_DISK
            | FLAG_PARENT_DEAD
            | FLAG_VECTOR_ON_DISK
            | FLAG_SHARED;
        if slots.iter().any(|slot| unpack_flags(*slot) & !known != 0 || slot >> (FLAGS_SHIFT + 8) != 0) {
            return Err(CorruptReason::SnapshotNodeHasUnknownFlags);
        }
        let legs = LegWords::from_parts(leg_words, leg_node_ends, slots.len())?;
        let children = Children::from_row(slots.len(), child_row_starts, child_row)?;
        let doomed_text = slots.iter().filter(|slot| holds_doomed_text(unpack_flags(**slot))).count() as u64;
        Ok(Graph { slots, legs, children, deferring_folds: false, doomed_text })
    }

    /// Whether `other` holds the same nodes, flags, locations, legs and child edges.
    #[must_use]
    pub fn same_as(&self, other: &Graph) -> bool {
        self.slots == other.slots
            && self.legs.words() == other.legs.words()
            && self.legs.node_ends() == other.legs.node_ends()
            && self.children.same_edges(&other.children, self.slots.len())
    }

    /// The legs of a memory (none for a lot), as ids.
    pub fn legs(&self, id: u64) -> Result<Vec<Vec<u64>>, Error> {
        self.slot(id)?;
        let index = node_index_u32(id)?;
        Ok(split_legs(self.words_of(index))
            .map(|leg| leg.iter().map(|word| u64::from(parent_of(*word)) + 1).collect())
            .collect())
    }

    /// Marks `id` and `removed` dead, and their children as having a dead parent.
    pub fn kill(&mut self, id: u64, removed: &[u64]) {
        for dead in core::iter::once(&id).chain(removed) {
            self.kill_one(*dead);
        }
    }

    /// Marks `dead` dead, and its children as having a dead parent.
    fn kill_one(&mut self, dead: u64) {
        self.update_flags(dead, |flags| flags & !FLAG_ALIVE);
        let Some(index) = self.index(dead) else { return };
        let slots = &mut self.slots;
        self.children.for_each(graph_position_u32(index), |child| {
            if let Some(slot) = slots.get_mut(child as usize) {
                *slot |= u64::from(FLAG_PARENT_DEAD) << FLAGS_SHIFT;
            }
        });
    }

    /// The ids of every node of `kind`, alive or dead, ascending.
    pub fn every(&self, kind: Kind) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(index, slot)| (kind_of_flags(unpack_flags(*slot)) == kind).then_some(index as u64 + 1))
    }

    /// The ids of alive nodes of `kind`, ascending.
    pub fn alive(&self, kind: Kind) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let flags = unpack_flags(*slot);
            (flags & FLAG_ALIVE != 0 && kind_of_flags(flags) == kind).then_some(index as u64 + 1)
        })
    }

    /// Ids whose record still holds content that must go: covered by an Erase, or dead when
    /// `all_dead` (compaction).
    pub fn content_to_remove(&self, all_dead: bool) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let flags = unpack_flags(*slot);
            let on_disk = flags & FLAG_CONTENT_ON_DISK != 0;
            let doomed = flags & FLAG_ERASE != 0 || (all_dead && flags & FLAG_ALIVE == 0);
            (on_disk && doomed).then_some(index as u64 + 1)
        })
    }
}

/// Whether a node with `flags` holds text a compaction would take out.
fn holds_doomed_text(flags: u8) -> bool {
    flags & FLAG_CONTENT_ON_DISK != 0 && (flags & FLAG_ERASE != 0 || flags & FLAG_ALIVE == 0)
}

/// `count` after one node's flags went from `before` to `after`.
fn counted(count: u64, before: u8, after: u8) -> u64 {
    match (holds_doomed_text(before), holds_doomed_text(after)) {
        (false, true) => count + 1,
        (true, false) => count.saturating_sub(1),
        _ => count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Mode;
    use alloc::vec;

    const HERE: Location = Location { segment: 1, offset: 0 };

    /// The example of the reference description: lots A, B, C; M1 = {A} or {B}; M2 = {C};
    /// M3 = {M1, M2}.
    fn example() -> Graph {
        let mut graph = Graph::default();
        for _ in 0..3 {
            graph.add_lot(HERE, true).unwrap();
        }
        graph.add_memory(vec![vec![1], vec![2]], HERE, true).unwrap();
        graph.add_memory(vec![vec![3]], HERE, true).unwrap();
        graph.add_memory(vec![vec![4, 5]], HERE, true).unwrap();
        graph
    }

    #[test]
    fn fair_recall_keeps_a_memory_with_an_independent_leg() {
        let graph = example();
        assert_eq!(graph.preview_recall(3, Mode::Fair), Ok(vec![5, 6]));
        assert_eq!(graph.preview_recall(1, Mode::Fair), Ok(vec![]));
    }

    #[test]
    fn strict_recall_removes_everything_downstream() {
        let graph = example();
        assert_eq!(graph.preview_recall(1, Mode::Strict), Ok(vec![4, 6]));
    }

    #[test]
    fn a_dead_node_is_not_a_parent_and_not_recalled_twice() {
        let mut graph = example();
        let removed = graph.preview_recall(3, Mode::Fair).unwrap();
        graph.kill(3, &removed);
        assert_eq!(graph.check_parent(3), Err(Error::DeadParent { id: Id::from(3) }));
        assert_eq!(graph.preview_recall(5, Mode::Fair), Err(Error::AlreadyRecalled { id: Id::from(5) }));
        assert_eq!(graph.check_parent(9), Err(Error::UnknownId { id: Id::from(9) }));
        assert_eq!(
            graph.plan_recall(3, Mode::Fair, crate::id::Removal::Erase).map(|plan| plan.erase),
            Ok(vec![3, 5, 6])
        );
        assert_eq!(graph.alive(Kind::Memory).collect::<Vec<_>>(), vec![4]);
    }

    #[test]
    fn legs_read_back_as_ids() {
        let graph = example();
        assert_eq!(graph.legs(4), Ok(vec![vec![1], vec![2]]));
        assert_eq!(graph.legs(6), Ok(vec![vec![4, 5]]));
        assert_eq!(graph.legs(1), Ok(vec![]));
    }

    #[test]
    fn settling_changes_no_answer() {
        let mut graph = example();
        let before: Vec<_> = (1..=6).map(|id| graph.preview_recall(id, Mode::Fair)).collect();
        graph.settle();
        let after: Vec<_> = (1..=6).map(|id| graph.preview_recall(id, Mode::Fair)).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn a_graph_survives_its_parts() {
        let mut graph = example();
        graph.settle();
        let back = from_parts(graph.parts()).unwrap();
        assert!(back.same_as(&graph));
        for id in 1..=6 {
            assert_eq!(back.legs(id), graph.legs(id));
            assert_eq!(back.preview_recall(id, Mode::Strict), graph.preview_recall(id, Mode::Strict));
        }
    }

    #[test]
    fn parts_that_would_lead_a_lookup_outside_the_graph_are_refused() {
        let mut graph = example();
        graph.settle();
        let parts = graph.parts();
        let mut unknown_parent = parts.leg_words.to_vec();
        unknown_parent[0] = (unknown_parent[0] & !((1 << 30) - 1)) | 6; // node 7 does not exist
        assert!(from_parts(GraphParts { leg_words: &unknown_parent, ..parts }).is_err());
        assert!(from_parts(GraphParts { leg_node_ends: &[], ..parts }).is_err());
        assert!(from_parts(GraphParts { leg_node_ends: &parts.leg_node_ends[1..], ..parts }).is_err());
        let short_row = &parts.child_row[1..];
        assert!(from_parts(GraphParts { child_row: short_row, ..parts }).is_err());
        let mut unknown_child = parts.child_row.to_vec();
        unknown_child[0] = 6;
        assert!(from_parts(GraphParts { child_row: &unknown_child, ..parts }).is_err());
    }

    #[test]
    fn well_formed_parts_that_differ_from_the_graph_are_told_apart() {
        let mut graph = example();
        graph.settle();
        let parts = graph.parts();
        let mut forward = parts.leg_words.to_vec();
        forward[0] = (forward[0] & !((1 << 30) - 1)) | 5; // memory 4 naming node 6 as a parent
        let mut swapped = parts.child_row.to_vec();
        swapped.swap(1, 2); // lots 2 and 3 exchange their only children
        let shifted_ends = [0, 0, 0, 1, 3, 5]; // memory 4 gives its second word to memory 5
        for lying in [
            GraphParts { leg_words: &forward, ..parts },
            GraphParts { child_row: &swapped, ..parts },
            GraphParts { leg_node_ends: &shifted_ends, ..parts },
        ] {
            assert!(!from_parts(lying).unwrap().same_as(&graph));
        }
    }

    fn from_parts(parts: GraphParts<'_>) -> Result<Graph, CorruptReason> {
        Graph::from_parts(
            parts.slots.to_vec(),
            parts.leg_words.to_vec(),
            parts.leg_node_ends.to_vec(),
            parts.child_row_starts.to_vec(),
            parts.child_row.to_vec(),
        )
    }

    #[test]
    fn location_and_flags_pack_without_loss() {
        let location = Location { segment: u16::MAX, offset: u32::MAX };
        let slot = pack(location, 0xA5);
        assert_eq!(unpack_location(slot), location);
        assert_eq!(unpack_flags(slot), 0xA5);
    }
}
