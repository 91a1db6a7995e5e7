//! What `get` returns: one lot or memory with its provenance.

use alloc::string::String;
use alloc::vec::Vec;

use crate::id::{Id, Leg};

/// Whether a node is a source or a memory, with what describes each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    /// A source the agent learned from.
    Lot {
        /// Its label, as given when it was added.
        label: String,
    },
    /// Something the agent knows.
    Memory {
        /// The ways it was learned.
        legs: Vec<Leg>,
    },
    /// A lot or memory of a space, standing in the agent's memory so its memories may name it
    /// as a parent. It holds no content of its own; the space holds it.
    Shared {
        /// The space's number in the store.
        space: u64,
        /// The node's id in the space.
        id: Id,
    },
}

/// One lot or memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: Id,
    /// Lot or memory.
    pub kind: NodeKind,
    pub(crate) alive: bool,
    pub(crate) content: Option<Vec<u8>>,
    /// The parents that came from read tracking (ascending; each is in every leg).
    pub(crate) tracked: Vec<Id>,
}

impl Node {
    /// A node with these facts, for code that rebuilds one away from the engine that read it
    /// (a client of the memory server). `content` is `None` for a withheld or erased text;
    /// `tracked_parents` are those of [`Node::tracked_parents`] (sorted and made unique here).
    #[must_use]
    pub fn from_parts(id: Id, kind: NodeKind, alive: bool, content: Option<Vec<u8>>, tracked_parents: Vec<Id>) -> Node {
        let mut tracked = tracked_parents;
        tracked.sort_unstable();
        tracked.dedup();
        Node { id, kind, alive, content, tracked }
    }

    /// Whether it was not recalled.
    #[must_use]
    pub fn is_alive(&self) -> bool {
        self.alive
    }

    /// Its content; `None` once erased (or compacted away after a recall).
    #[must_use]
    pub fn content(&self) -> Option<&[u8]> {
        self.content.as_deref()
    }

    /// The parents a memory got from read tracking, ascending: ids it was written after reading,
    /// added to each of its legs, that not every leg declared. Each is a parent in every leg.
    /// Empty for a lot, and for a memory written without tracking.
    #[must_use]
    pub fn tracked_parents(&self) -> &[Id] {
        &self.tracked
    }

    /// Whether it is a lot.
    #[must_use]
    pub fn is_lot(&self) -> bool {
        matches!(self.kind, NodeKind::Lot { .. })
    }
}
