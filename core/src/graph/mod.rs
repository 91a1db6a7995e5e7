//! The recall graph in RAM: every lot and memory of one agent, its legs, its children and where
//! its record lies on disk.
//!
//! A node costs one 64-bit word (record location and flags), its legs one 32-bit word per
//! parent, and its child edges 4 bytes each once folded into the row. Nothing is allocated per
//! node, and content is never held: `get` reads it from disk.

mod children;
mod legs;
mod recall;

use alloc::vec::Vec;

use children::{for_each_distinct_parent, Children};
use legs::{parent_of, split_legs, LegWords, PARENT_INDEX_MAX};

use crate::error::Error;
use crate::id::Id;

/// The most nodes one graph holds (parent indexes are packed into 30 bits).
pub const NODES_MAX: u64 = PARENT_INDEX_MAX as u64;

const FLAG_MEMORY: u8 = 1;
const FLAG_ALIVE: u8 = 2;
/// An Erase covered this node: its text must not stay in any file.
const FLAG_ERASE: u8 = 4;
/// The node's record in the files still holds its content.
const FLAG_CONTENT_ON_DISK: u8 = 8;

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

fn pack(location: Location, flags: u8) -> u64 {
    u64::from(location.offset) | (u64::from(location.segment) << SEGMENT_SHIFT) | (u64::from(flags) << FLAGS_SHIFT)
}

fn unpack_location(slot: u64) -> Location {
    Location { offset: slot as u32, segment: (slot >> SEGMENT_SHIFT) as u16 }
}

fn unpack_flags(slot: u64) -> u8 {
    (slot >> FLAGS_SHIFT) as u8
}

/// Whether a node is a lot or a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A source.
    Lot,
    /// A memory.
    Memory,
}

/// The graph of one agent.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    slots: Vec<u64>,
    legs: LegWords,
    children: Children,
    /// While many nodes are loaded at once, child edges stay in the overflow until `settle`.
    deferring_rebuilds: bool,
}

impl Graph {
    /// How many nodes were ever added.
    pub fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Whether no node was ever added.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The id the next node gets.
    pub fn next_id(&self) -> u64 {
        self.len() + 1
    }

    /// Bytes of RAM the graph holds (capacities of its vectors), for measurements.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 8 + self.legs.heap_bytes() + self.children.heap_bytes()
    }

    fn index(&self, id: u64) -> Option<usize> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        (index < self.slots.len()).then_some(index)
    }

    fn slot(&self, id: u64) -> Result<u64, Error> {
        self.index(id).and_then(|index| self.slots.get(index).copied()).ok_or(Error::UnknownId { id: Id::from(id) })
    }

    fn flags_of_index(&self, index: u32) -> u8 {
        self.slots.get(index as usize).map_or(0, |slot| unpack_flags(*slot))
    }

    fn update_flags(&mut self, id: u64, change: impl FnOnce(u8) -> u8) {
        if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
            *slot = pack(unpack_location(*slot), change(unpack_flags(*slot)));
        }
    }

    fn is_memory_index(&self, index: usize) -> bool {
        self.slots.get(index).is_some_and(|slot| unpack_flags(*slot) & FLAG_MEMORY != 0)
    }

    /// The packed leg words of node `index` (empty for a lot).
    fn words_of(&self, index: u32) -> &[u32] {
        self.legs.of(index as usize, |other| self.is_memory_index(other))
    }

    /// Whether `id` is a node that is alive.
    pub fn is_alive(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_ALIVE != 0)
    }

    /// The kind of `id`.
    pub fn kind(&self, id: u64) -> Result<Kind, Error> {
        let memory = unpack_flags(self.slot(id)?) & FLAG_MEMORY != 0;
        Ok(if memory { Kind::Memory } else { Kind::Lot })
    }

    /// Where the record of `id` lies.
    pub fn location(&self, id: u64) -> Result<Location, Error> {
        Ok(unpack_location(self.slot(id)?))
    }

    /// Moves the record of `id` (after a segment was rewritten).
    pub fn set_location(&mut self, id: u64, location: Location, content_on_disk: bool) {
        if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
            let flags = unpack_flags(*slot) & !FLAG_CONTENT_ON_DISK;
            let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
            *slot = pack(location, flags | disk);
        }
    }

    /// Whether an Erase covered `id`.
    pub fn is_erase_requested(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_ERASE != 0)
    }

    /// Whether the record of `id` in the files still holds its content.
    pub fn is_content_on_disk(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| unpack_flags(slot) & FLAG_CONTENT_ON_DISK != 0)
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
            return Err(Error::LimitExceeded { what: "nodes of one agent", size: self.len() + 1, limit: NODES_MAX });
        }
        self.legs.begin_node(self.slots.len());
        self.slots.push(pack(location, flags));
        Ok(self.len())
    }

    /// Adds a lot; returns its id.
    pub fn add_lot(&mut self, location: Location, content_on_disk: bool) -> Result<u64, Error> {
        let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
        self.push_slot(FLAG_ALIVE | disk, location)
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
        let child = (id - 1) as u32;
        let words = self.legs.push_legs(legs.into_iter().map(|leg| leg.into_iter().map(|parent| (parent - 1) as u32)));
        let children = &mut self.children;
        for_each_distinct_parent(words, |parent| children.link(parent, child));
        if !self.deferring_rebuilds && self.children.wants_rebuild() {
            self.rebuild_children();
        }
        Ok(id)
    }

    /// Keeps new child edges in the overflow until `settle`: for loading many nodes at once,
    /// where one rebuild at the end costs less than many along the way.
    pub fn defer_rebuilds(&mut self) {
        self.deferring_rebuilds = true;
    }

    /// Folds every child edge into the compact row and gives back spare capacity: call after
    /// loading many nodes at once.
    pub fn settle(&mut self) {
        self.deferring_rebuilds = false;
        self.rebuild_children();
        self.slots.shrink_to_fit();
        self.legs.shrink();
    }

    fn rebuild_children(&mut self) {
        let slots = &self.slots;
        let is_memory = |index: usize| slots.get(index).is_some_and(|slot| unpack_flags(*slot) & FLAG_MEMORY != 0);
        let memories = self.legs.memories(slots.len(), is_memory);
        self.children.rebuild(slots.len(), memories);
    }

    /// The node slots and packed leg words, for a snapshot.
    pub fn parts(&self) -> (&[u64], &[u32]) {
        (&self.slots, self.legs.words())
    }

    /// A graph rebuilt from a snapshot's parts, after checking they describe a possible graph.
    pub fn from_parts(slots: Vec<u64>, leg_words: Vec<u32>) -> Result<Graph, &'static str> {
        if slots.len() as u64 > NODES_MAX {
            return Err("snapshot holds too many nodes");
        }
        let known = FLAG_MEMORY | FLAG_ALIVE | FLAG_ERASE | FLAG_CONTENT_ON_DISK;
        if slots.iter().any(|slot| unpack_flags(*slot) & !known != 0 || slot >> (FLAGS_SHIFT + 8) != 0) {
            return Err("snapshot node has unknown flags");
        }
        let is_memory = |index: usize| slots.get(index).is_some_and(|slot| unpack_flags(*slot) & FLAG_MEMORY != 0);
        let legs = LegWords::from_words(leg_words, slots.len(), is_memory)?;
        let mut graph = Graph { slots, legs, children: Children::default(), deferring_rebuilds: false };
        graph.settle();
        Ok(graph)
    }

    /// The legs of a memory (none for a lot), as ids.
    pub fn legs(&self, id: u64) -> Result<Vec<Vec<u64>>, Error> {
        self.slot(id)?;
        let index = (id - 1) as u32;
        Ok(split_legs(self.words_of(index))
            .map(|leg| leg.iter().map(|word| u64::from(parent_of(*word)) + 1).collect())
            .collect())
    }

    /// Marks `id` and `removed` dead.
    pub fn kill(&mut self, id: u64, removed: &[u64]) {
        for dead in core::iter::once(&id).chain(removed) {
            self.update_flags(*dead, |flags| flags & !FLAG_ALIVE);
        }
    }

    /// The ids of alive nodes of `kind`, ascending.
    pub fn alive(&self, kind: Kind) -> impl Iterator<Item = u64> + '_ {
        let wanted = if kind == Kind::Memory { FLAG_MEMORY } else { 0 };
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let flags = unpack_flags(*slot);
            (flags & FLAG_ALIVE != 0 && flags & FLAG_MEMORY == wanted).then_some(index as u64 + 1)
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
        assert_eq!(graph.dead_descendants(3), Ok(vec![5, 6]));
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
        let graph = example();
        let (slots, words) = graph.parts();
        let back = Graph::from_parts(slots.to_vec(), words.to_vec()).unwrap();
        for id in 1..=6 {
            assert_eq!(back.legs(id), graph.legs(id));
            assert_eq!(back.preview_recall(id, Mode::Strict), graph.preview_recall(id, Mode::Strict));
        }
    }

    #[test]
    fn impossible_parts_are_refused() {
        let graph = example();
        let (slots, words) = graph.parts();
        let mut forward = words.to_vec();
        forward[0] = (forward[0] & !((1 << 30) - 1)) | 5; // memory 4 naming node 6 as a parent
        assert!(Graph::from_parts(slots.to_vec(), forward).is_err());
        assert!(Graph::from_parts(slots.to_vec(), words[..words.len() - 1].to_vec()).is_err());
        let mut extra = words.to_vec();
        extra.push(0);
        assert!(Graph::from_parts(slots.to_vec(), extra).is_err());
    }

    #[test]
    fn location_and_flags_pack_without_loss() {
        let location = Location { segment: u16::MAX, offset: u32::MAX };
        let slot = pack(location, 0xA5);
        assert_eq!(unpack_location(slot), location);
        assert_eq!(unpack_flags(slot), 0xA5);
    }
}
