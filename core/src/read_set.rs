//! What a session read since its previous write: the ids read tracking adds to the legs of the
//! next memory it remembers.

use alloc::vec::Vec;

use crate::id::Id;
use crate::limits::PARENTS_PER_LEG_MAX;
use crate::node::Node;

/// The most ids a read set holds: one more than a leg may have, so that a set over the limit is
/// still seen to be over it (and the write refused) without holding every id read.
pub const READ_SET_MAX_IDS: usize = PARENTS_PER_LEG_MAX + 1;

/// The ids of lots and memories a session read (through `get` or `search`) since its previous
/// write, sorted and unique. [`AgentEngine::remember_tracked`](crate::AgentEngine::remember_tracked)
/// adds them to every leg of the memory it writes, so that a memory written after reading a
/// source is recalled with it even when the caller did not declare it.
///
/// It never holds more than [`READ_SET_MAX_IDS`] ids: once full, a new id is not kept but the
/// set stays full, and a write with it is refused (`Error::LimitExceeded`) rather than made with
/// a dependency silently left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSet {
    ids: Vec<Id>,
}

impl ReadSet {
    /// An empty read set.
    #[must_use]
    pub fn new() -> ReadSet {
        ReadSet::default()
    }

    /// Notes that `id` was read. An id noted twice is held once.
    pub fn note(&mut self, id: Id) {
        if let Err(position) = self.ids.binary_search(&id) {
            if self.ids.len() < READ_SET_MAX_IDS {
                self.ids.insert(position, id);
            }
        }
    }

    /// Notes a node `get` returned: only an alive one, since a recalled node's content is
    /// withheld and nothing of it was read.
    pub fn note_node(&mut self, node: &Node) {
        if node.is_alive() {
            self.note(node.id);
        }
    }

    /// The ids noted, ascending.
    #[must_use]
    pub fn ids(&self) -> &[Id] {
        &self.ids
    }

    /// How many ids are held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing was noted since the last `clear`.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Forgets every id: a session calls it once a write made with the set succeeded.
    pub fn clear(&mut self) {
        self.ids.clear();
    }
}

impl FromIterator<Id> for ReadSet {
    fn from_iter<I: IntoIterator<Item = Id>>(iterator: I) -> ReadSet {
        let mut reads = ReadSet::new();
        iterator.into_iter().for_each(|id| reads.note(id));
        reads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_come_back_sorted_and_once() {
        let reads: ReadSet = [5, 1, 5, 3].into_iter().map(Id::from).collect();
        assert_eq!(reads.ids(), &[Id::from(1), Id::from(3), Id::from(5)]);
        assert_eq!(reads.len(), 3);
    }

    #[test]
    fn only_an_alive_node_counts_as_read() {
        let lot = |id: u64, alive: bool| {
            let kind = crate::node::NodeKind::Lot { label: alloc::string::String::from("note") };
            Node::from_parts(Id::from(id), kind, alive, alive.then(|| alloc::vec![1]), Vec::new())
        };
        let mut reads = ReadSet::new();
        reads.note_node(&lot(1, true));
        reads.note_node(&lot(2, false));
        assert_eq!(reads.ids(), &[Id::from(1)]);
    }

    #[test]
    fn clear_empties_it() {
        let mut reads = ReadSet::new();
        reads.note(Id::from(2));
        assert!(!reads.is_empty());
        reads.clear();
        assert!(reads.is_empty());
        assert_eq!(reads.ids(), &[]);
    }

    #[test]
    fn a_full_set_stays_full_and_keeps_what_it_holds() {
        let mut reads: ReadSet = (1..=200).map(Id::from).collect();
        assert_eq!(reads.len(), READ_SET_MAX_IDS);
        let held = reads.ids().to_vec();
        reads.note(Id::from(0));
        assert_eq!(reads.ids(), &held[..]);
        assert_eq!(held, (1..=READ_SET_MAX_IDS as u64).map(Id::from).collect::<Vec<_>>());
    }

    proptest! {
        #[test]
        fn matches_a_sorted_set_until_full(ids in prop::collection::vec(0u64..100, 0..150)) {
            let mut reads = ReadSet::new();
            let mut reference = alloc::collections::BTreeSet::new();
            for id in ids {
                reads.note(Id::from(id));
                if reference.len() < READ_SET_MAX_IDS {
                    reference.insert(id);
                }
                let expected: Vec<Id> = reference.iter().copied().map(Id::from).collect();
                prop_assert_eq!(reads.ids(), &expected[..]);
            }
        }
    }
}
