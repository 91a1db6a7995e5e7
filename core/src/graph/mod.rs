//! The recall graph in RAM: every lot and memory of one agent, its legs, its children and where
//! its record lies on disk.
//!
//! Nodes live in one vector indexed by `id - 1`; legs in one vector of 32-bit words; child edges
//! in one vector of linked entries. Nothing is allocated per node, so a million memories cost a
//! few large vectors rather than millions of small ones.

use alloc::vec::Vec;
use hashbrown::HashSet;

use crate::error::Error;
use crate::id::{Id, Mode};
use crate::limits::NODES_PER_AGENT_MAX;

const NO_EDGE: u32 = u32::MAX;

const FLAG_MEMORY: u8 = 1;
const FLAG_ALIVE: u8 = 2;
/// An Erase covered this node: its text must not stay in any file.
const FLAG_ERASE: u8 = 4;
/// The node's record in the files still holds its content.
const FLAG_CONTENT_ON_DISK: u8 = 8;

/// Where a record lies: segment number and byte offset in that segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The segment number.
    pub segment: u32,
    /// The record's offset in the segment file.
    pub offset: u32,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    location: Location,
    first_leg_word: u32,
    first_child_edge: u32,
    flags: u8,
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    child: u32,
    next: u32,
}

/// The graph of one agent.
#[derive(Debug, Default)]
pub struct Graph {
    slots: Vec<Slot>,
    /// For each memory: leg count, then for each leg its parent count and parent indexes.
    leg_words: Vec<u32>,
    edges: Vec<Edge>,
}

/// Whether a node is a lot or a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A source.
    Lot,
    /// A memory.
    Memory,
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

    /// Bytes of RAM the graph's vectors hold (their capacity), for measurements.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * core::mem::size_of::<Slot>()
            + self.leg_words.capacity() * 4
            + self.edges.capacity() * core::mem::size_of::<Edge>()
    }

    fn index(&self, id: u64) -> Option<usize> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        (index < self.slots.len()).then_some(index)
    }

    fn slot(&self, id: u64) -> Result<&Slot, Error> {
        self.index(id).and_then(|index| self.slots.get(index)).ok_or(Error::UnknownId { id: Id::from(id) })
    }

    fn flags_of_index(&self, index: u32) -> u8 {
        self.slots.get(index as usize).map_or(0, |slot| slot.flags)
    }

    /// Whether `id` is a node that is alive.
    pub fn is_alive(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| slot.flags & FLAG_ALIVE != 0)
    }

    /// The kind of `id`.
    pub fn kind(&self, id: u64) -> Result<Kind, Error> {
        let slot = self.slot(id)?;
        Ok(if slot.flags & FLAG_MEMORY != 0 { Kind::Memory } else { Kind::Lot })
    }

    /// Where the record of `id` lies.
    pub fn location(&self, id: u64) -> Result<Location, Error> {
        Ok(self.slot(id)?.location)
    }

    /// Moves the record of `id` (after a segment was rewritten).
    pub fn set_location(&mut self, id: u64, location: Location, content_on_disk: bool) {
        if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
            slot.location = location;
            if content_on_disk {
                slot.flags |= FLAG_CONTENT_ON_DISK;
            } else {
                slot.flags &= !FLAG_CONTENT_ON_DISK;
            }
        }
    }

    /// Whether an Erase covered `id`.
    pub fn is_erase_requested(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| slot.flags & FLAG_ERASE != 0)
    }

    /// Whether the record of `id` in the files still holds its content.
    pub fn is_content_on_disk(&self, id: u64) -> bool {
        self.slot(id).is_ok_and(|slot| slot.flags & FLAG_CONTENT_ON_DISK != 0)
    }

    /// Marks `ids` as covered by an Erase.
    pub fn request_erase(&mut self, ids: impl IntoIterator<Item = u64>) {
        for id in ids {
            if let Some(slot) = self.index(id).and_then(|index| self.slots.get_mut(index)) {
                slot.flags |= FLAG_ERASE;
            }
        }
    }

    /// Checks that `id` may be a parent of a new memory: known and alive.
    pub fn check_parent(&self, id: u64) -> Result<(), Error> {
        if self.slot(id)?.flags & FLAG_ALIVE == 0 {
            return Err(Error::DeadParent { id: Id::from(id) });
        }
        Ok(())
    }

    fn push_slot(&mut self, flags: u8, location: Location) -> Result<u64, Error> {
        if self.len() >= NODES_PER_AGENT_MAX {
            return Err(Error::LimitExceeded {
                what: "nodes of one agent",
                size: self.len() + 1,
                limit: NODES_PER_AGENT_MAX,
            });
        }
        let first_leg_word = self.leg_words.len() as u32;
        self.slots.push(Slot { location, first_leg_word, first_child_edge: NO_EDGE, flags });
        Ok(self.len())
    }

    /// Adds a lot; returns its id.
    pub fn add_lot(&mut self, location: Location, content_on_disk: bool) -> Result<u64, Error> {
        let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
        self.push_slot(FLAG_ALIVE | disk, location)
    }

    /// Adds a memory whose legs were checked (every parent known and alive); returns its id.
    pub fn add_memory<L, P>(&mut self, legs: L, location: Location, content_on_disk: bool) -> Result<u64, Error>
    where
        L: IntoIterator<Item = P>,
        P: IntoIterator<Item = u64>,
    {
        let disk = if content_on_disk { FLAG_CONTENT_ON_DISK } else { 0 };
        let id = self.push_slot(FLAG_MEMORY | FLAG_ALIVE | disk, location)?;
        let child = (id - 1) as u32;
        let count_position = self.leg_words.len();
        self.leg_words.push(0);
        let mut leg_count = 0u32;
        let mut linked: Vec<u32> = Vec::new();
        for leg in legs {
            leg_count += 1;
            let size_position = self.leg_words.len();
            self.leg_words.push(0);
            let mut size = 0u32;
            for parent in leg {
                let parent_index = (parent - 1) as u32;
                self.leg_words.push(parent_index);
                size += 1;
                if !linked.contains(&parent_index) {
                    linked.push(parent_index);
                }
            }
            if let Some(word) = self.leg_words.get_mut(size_position) {
                *word = size;
            }
        }
        if let Some(word) = self.leg_words.get_mut(count_position) {
            *word = leg_count;
        }
        for parent_index in linked {
            self.link_child(parent_index, child);
        }
        Ok(id)
    }

    fn link_child(&mut self, parent_index: u32, child: u32) {
        let edge_index = self.edges.len() as u32;
        if let Some(parent) = self.slots.get_mut(parent_index as usize) {
            self.edges.push(Edge { child, next: parent.first_child_edge });
            parent.first_child_edge = edge_index;
        }
    }

    /// The legs of a memory (none for a lot), as ids.
    pub fn legs(&self, id: u64) -> Result<Vec<Vec<u64>>, Error> {
        let slot = self.slot(id)?;
        let mut legs = Vec::new();
        if slot.flags & FLAG_MEMORY == 0 {
            return Ok(legs);
        }
        self.for_each_leg(slot.first_leg_word, |parents| {
            legs.push(parents.iter().map(|parent| u64::from(*parent) + 1).collect());
            true
        });
        Ok(legs)
    }

    /// Calls `visit` with each leg's parent indexes until it returns false.
    fn for_each_leg(&self, first_word: u32, mut visit: impl FnMut(&[u32]) -> bool) {
        let words = self.leg_words.get(first_word as usize..).unwrap_or_default();
        let Some((&count, mut rest)) = words.split_first() else { return };
        for _ in 0..count {
            let Some((&size, after)) = rest.split_first() else { return };
            let Some((parents, next)) = after.split_at_checked(size as usize) else { return };
            if !visit(parents) {
                return;
            }
            rest = next;
        }
    }

    fn children(&self, index: u32) -> impl Iterator<Item = u32> + '_ {
        let mut edge = self.slots.get(index as usize).map_or(NO_EDGE, |slot| slot.first_child_edge);
        core::iter::from_fn(move || {
            let current = self.edges.get(edge as usize)?;
            edge = current.next;
            Some(current.child)
        })
    }

    /// The ids a recall of `id` would remove (not `id` itself), ascending. Changes nothing.
    pub fn preview_recall(&self, id: u64, mode: Mode) -> Result<Vec<u64>, Error> {
        let slot = self.slot(id)?;
        if slot.flags & FLAG_ALIVE == 0 {
            return Err(Error::AlreadyRecalled { id: Id::from(id) });
        }
        let target = (id - 1) as u32;
        let mut removed = match mode {
            Mode::Fair => self.fair_closure(target),
            Mode::Strict => self.descendants(target, |flags| flags & FLAG_ALIVE != 0),
        };
        removed.sort_unstable();
        Ok(removed.into_iter().map(|index| u64::from(index) + 1).collect())
    }

    /// Memories none of whose legs holds once `target` dies, repeated to a fixpoint.
    fn fair_closure(&self, target: u32) -> Vec<u32> {
        let mut dead: HashSet<u32> = HashSet::new();
        dead.insert(target);
        let mut queue = alloc::vec![target];
        let mut removed = Vec::new();
        while let Some(node) = queue.pop() {
            for child in self.children(node) {
                let alive = self.flags_of_index(child) & FLAG_ALIVE != 0;
                if !alive || dead.contains(&child) || self.has_holding_leg(child, &dead) {
                    continue;
                }
                dead.insert(child);
                removed.push(child);
                queue.push(child);
            }
        }
        removed
    }

    fn has_holding_leg(&self, index: u32, dead: &HashSet<u32>) -> bool {
        let Some(slot) = self.slots.get(index as usize) else { return false };
        let mut holds = false;
        self.for_each_leg(slot.first_leg_word, |parents| {
            holds =
                parents.iter().all(|parent| self.flags_of_index(*parent) & FLAG_ALIVE != 0 && !dead.contains(parent));
            !holds
        });
        holds
    }

    /// Every memory with `target` anywhere in its history (through dead nodes too) whose flags
    /// pass `keep`.
    fn descendants(&self, target: u32, keep: impl Fn(u8) -> bool) -> Vec<u32> {
        let mut seen: HashSet<u32> = HashSet::new();
        let mut queue = alloc::vec![target];
        let mut found = Vec::new();
        while let Some(node) = queue.pop() {
            for child in self.children(node) {
                if seen.insert(child) {
                    if keep(self.flags_of_index(child)) {
                        found.push(child);
                    }
                    queue.push(child);
                }
            }
        }
        found
    }

    /// Recalled memories with `id` in their history: what an Erase of an already recalled id
    /// covers besides the id itself. Ascending.
    pub fn dead_descendants(&self, id: u64) -> Result<Vec<u64>, Error> {
        self.slot(id)?;
        let mut found = self.descendants((id - 1) as u32, |flags| flags & FLAG_ALIVE == 0);
        found.sort_unstable();
        Ok(found.into_iter().map(|index| u64::from(index) + 1).collect())
    }

    /// Marks `id` and `removed` dead.
    pub fn kill(&mut self, id: u64, removed: &[u64]) {
        for dead in core::iter::once(&id).chain(removed) {
            if let Some(slot) = self.index(*dead).and_then(|index| self.slots.get_mut(index)) {
                slot.flags &= !FLAG_ALIVE;
            }
        }
    }

    /// The ids of alive nodes of `kind`, ascending.
    pub fn alive(&self, kind: Kind) -> impl Iterator<Item = u64> + '_ {
        let wanted = if kind == Kind::Memory { FLAG_MEMORY } else { 0 };
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let alive = slot.flags & FLAG_ALIVE != 0 && slot.flags & FLAG_MEMORY == wanted;
            alive.then_some(index as u64 + 1)
        })
    }

    /// Ids whose record still holds content that must go: covered by an Erase, or dead when
    /// `all_dead` (compaction).
    pub fn content_to_remove(&self, all_dead: bool) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().enumerate().filter_map(move |(index, slot)| {
            let on_disk = slot.flags & FLAG_CONTENT_ON_DISK != 0;
            let doomed = slot.flags & FLAG_ERASE != 0 || (all_dead && slot.flags & FLAG_ALIVE == 0);
            (on_disk && doomed).then_some(index as u64 + 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    const HERE: Location = Location { segment: 1, offset: 0 };

    /// The example of the reference description: lots A, B, C; M1 = {A} or {B}; M2 = {C};
    /// M3 = {M1, M2}.
    fn example() -> Graph {
        let mut graph = Graph::default();
        for _ in 0..3 {
            graph.add_lot(HERE, true).unwrap_or_default();
        }
        graph.add_memory(vec![vec![1], vec![2]], HERE, true).unwrap_or_default();
        graph.add_memory(vec![vec![3]], HERE, true).unwrap_or_default();
        graph.add_memory(vec![vec![4, 5]], HERE, true).unwrap_or_default();
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
        let removed = graph.preview_recall(3, Mode::Fair).unwrap_or_default();
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
}
