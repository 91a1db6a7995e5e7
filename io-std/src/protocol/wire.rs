//! The values of the engine as the protocol carries them: plain data, each with its way back
//! into the engine's type.

use cheesedb_core::{Hit, Id, LeftBehind, Leg, Mode, Node, NodeKind, Removal, TrustLevel};
use serde::{Deserialize, Serialize};

/// A lot or memory ([`Node`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireNode {
    /// Its id.
    pub id: u64,
    /// Lot or memory.
    pub kind: WireNodeKind,
    /// Whether it was not recalled.
    pub alive: bool,
    /// Its content; `None` when withheld or erased.
    #[serde(with = "super::bytes::optional")]
    pub content: Option<Vec<u8>>,
    /// The parents it got from read tracking.
    pub tracked_parents: Vec<u64>,
}

/// [`NodeKind`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireNodeKind {
    /// A source, with its label.
    Lot {
        /// Its label.
        label: String,
    },
    /// A memory, with its legs.
    Memory {
        /// Its legs, each a list of parent ids.
        legs: Vec<Vec<u64>>,
    },
    /// A node standing for a space's node.
    Shared {
        /// The space's number in the store.
        space: u64,
        /// The node's id in the space.
        id: u64,
    },
}

impl From<&Node> for WireNode {
    fn from(node: &Node) -> WireNode {
        let kind = match &node.kind {
            NodeKind::Lot { label } => WireNodeKind::Lot { label: label.clone() },
            NodeKind::Memory { legs } => WireNodeKind::Memory { legs: legs.iter().map(wire_leg).collect() },
            NodeKind::Shared { space, id } => WireNodeKind::Shared { space: *space, id: id.get() },
        };
        WireNode {
            id: node.id.get(),
            kind,
            alive: node.is_alive(),
            content: node.content().map(<[u8]>::to_vec),
            tracked_parents: node.tracked_parents().iter().map(|id| id.get()).collect(),
        }
    }
}

impl WireNode {
    /// The node it carries.
    #[must_use]
    pub fn into_node(self) -> Node {
        let kind = match self.kind {
            WireNodeKind::Lot { label } => NodeKind::Lot { label },
            WireNodeKind::Memory { legs } => {
                NodeKind::Memory { legs: legs.into_iter().map(|leg| engine_leg(&leg)).collect() }
            }
            WireNodeKind::Shared { space, id } => NodeKind::Shared { space, id: Id::from(id) },
        };
        let tracked_parents = self.tracked_parents.into_iter().map(Id::from).collect();
        Node::from_parts(Id::from(self.id), kind, self.alive, self.content, tracked_parents)
    }
}

/// A leg as a list of parent ids.
#[must_use]
pub(crate) fn wire_leg(leg: &Leg) -> Vec<u64> {
    leg.parents().iter().map(|id| id.get()).collect()
}

/// A leg from a list of parent ids (sorted and without repeats, as `Leg` keeps them).
#[must_use]
pub fn engine_leg(parents: &[u64]) -> Leg {
    parents.iter().copied().map(Id::from).collect()
}

/// Legs from their lists of parent ids.
#[cfg(feature = "server")]
pub(crate) fn engine_legs(lists: &[Vec<u64>]) -> Vec<Leg> {
    lists.iter().map(|parents| engine_leg(parents)).collect()
}

/// A limit from the wire: one past what this machine can count is as good as no limit.
#[cfg(feature = "server")]
pub(crate) fn engine_limit(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// A search hit ([`Hit`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WireHit {
    /// The lot or memory.
    pub id: u64,
    /// Its score.
    pub score: f32,
}

impl From<&Hit> for WireHit {
    fn from(hit: &Hit) -> WireHit {
        WireHit { id: hit.id.get(), score: hit.score }
    }
}

impl From<WireHit> for Hit {
    fn from(hit: WireHit) -> Hit {
        Hit::new(Id::from(hit.id), hit.score)
    }
}

/// A recall's [`Mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireMode {
    /// `Mode::Fair`.
    Fair,
    /// `Mode::Strict`.
    Strict,
}

impl From<Mode> for WireMode {
    fn from(mode: Mode) -> WireMode {
        match mode {
            Mode::Fair => WireMode::Fair,
            Mode::Strict => WireMode::Strict,
        }
    }
}

impl From<WireMode> for Mode {
    fn from(mode: WireMode) -> Mode {
        match mode {
            WireMode::Fair => Mode::Fair,
            WireMode::Strict => Mode::Strict,
        }
    }
}

/// A recall's [`Removal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireRemoval {
    /// `Removal::Untrusted`.
    Untrusted,
    /// `Removal::Erase`.
    Erase,
}

impl From<Removal> for WireRemoval {
    fn from(removal: Removal) -> WireRemoval {
        match removal {
            Removal::Untrusted => WireRemoval::Untrusted,
            Removal::Erase => WireRemoval::Erase,
        }
    }
}

impl From<WireRemoval> for Removal {
    fn from(removal: WireRemoval) -> Removal {
        match removal {
            WireRemoval::Untrusted => Removal::Untrusted,
            WireRemoval::Erase => Removal::Erase,
        }
    }
}

/// A name deleting agents left behind ([`LeftBehind`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireLeftBehind {
    /// The path, relative to the store folder.
    pub path: String,
    /// Why it was left.
    pub reason: String,
}

impl From<&LeftBehind> for WireLeftBehind {
    fn from(left: &LeftBehind) -> WireLeftBehind {
        WireLeftBehind { path: left.path.clone(), reason: left.reason.clone() }
    }
}

impl From<WireLeftBehind> for LeftBehind {
    fn from(left: WireLeftBehind) -> LeftBehind {
        LeftBehind { path: left.path, reason: left.reason }
    }
}

/// A [`TrustLevel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireTrust {
    /// `TrustLevel::Low`.
    Low,
    /// `TrustLevel::Normal`.
    Normal,
    /// `TrustLevel::High`.
    High,
}

impl From<TrustLevel> for WireTrust {
    fn from(level: TrustLevel) -> WireTrust {
        match level {
            TrustLevel::Low => WireTrust::Low,
            TrustLevel::Normal => WireTrust::Normal,
            TrustLevel::High => WireTrust::High,
        }
    }
}

impl From<WireTrust> for TrustLevel {
    fn from(level: WireTrust) -> TrustLevel {
        match level {
            WireTrust::Low => TrustLevel::Low,
            WireTrust::Normal => TrustLevel::Normal,
            WireTrust::High => TrustLevel::High,
        }
    }
}
