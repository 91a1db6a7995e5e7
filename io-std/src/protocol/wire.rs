//! The values of the engine as the protocol carries them: plain data, each with its way back
//! into the engine's type.

use cheesedb_core::{CorruptReason, Hit, Id, LeftBehind, Leg, Mode, Node, NodeKind, Removal, Report, TrustLevel};
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
}

impl From<&Node> for WireNode {
    fn from(node: &Node) -> WireNode {
        let kind = match &node.kind {
            NodeKind::Lot { label } => WireNodeKind::Lot { label: label.clone() },
            NodeKind::Memory { legs } => WireNodeKind::Memory { legs: legs.iter().map(wire_leg).collect() },
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

/// What opening an agent found and did ([`Report`]).
#[allow(missing_docs)] // Each field is the `Report` field of the same name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireReport {
    pub segments: u64,
    pub records: u64,
    pub records_from_snapshot: u64,
    pub snapshot_ignored: Option<CorruptReason>,
    pub dropped_bytes: u64,
    pub dropped_records: u64,
    pub erasures_completed_on_open: u64,
    pub temporary_files_removed: u64,
    pub segments_started_on_open: u64,
    pub unfinished_rolls_undone_on_open: u64,
    pub erase_journals_replayed_on_open: u64,
    pub erase_journals_discarded_on_open: u64,
    #[serde(default)]
    pub key_slots_restored_on_open: u64,
    #[serde(default)]
    pub epoch_slots_cut_on_open: u64,
    #[serde(default)]
    pub epoch_slots_destroyed_on_open: u64,
    #[serde(default)]
    pub epoch_rotations_finished_on_open: u64,
}

impl From<&Report> for WireReport {
    fn from(report: &Report) -> WireReport {
        WireReport {
            segments: report.segments,
            records: report.records,
            records_from_snapshot: report.records_from_snapshot,
            snapshot_ignored: report.snapshot_ignored,
            dropped_bytes: report.dropped_bytes,
            dropped_records: report.dropped_records,
            erasures_completed_on_open: report.erasures_completed_on_open,
            temporary_files_removed: report.temporary_files_removed,
            segments_started_on_open: report.segments_started_on_open,
            unfinished_rolls_undone_on_open: report.unfinished_rolls_undone_on_open,
            erase_journals_replayed_on_open: report.erase_journals_replayed_on_open,
            erase_journals_discarded_on_open: report.erase_journals_discarded_on_open,
            key_slots_restored_on_open: report.key_slots_restored_on_open,
            epoch_slots_cut_on_open: report.epoch_slots_cut_on_open,
            epoch_slots_destroyed_on_open: report.epoch_slots_destroyed_on_open,
            epoch_rotations_finished_on_open: report.epoch_rotations_finished_on_open,
        }
    }
}

impl WireReport {
    /// The report it carries.
    #[must_use]
    pub fn into_report(self) -> Report {
        let mut report = Report::default();
        report.segments = self.segments;
        report.records = self.records;
        report.records_from_snapshot = self.records_from_snapshot;
        report.snapshot_ignored = self.snapshot_ignored;
        report.dropped_bytes = self.dropped_bytes;
        report.dropped_records = self.dropped_records;
        report.erasures_completed_on_open = self.erasures_completed_on_open;
        report.temporary_files_removed = self.temporary_files_removed;
        report.segments_started_on_open = self.segments_started_on_open;
        report.unfinished_rolls_undone_on_open = self.unfinished_rolls_undone_on_open;
        report.erase_journals_replayed_on_open = self.erase_journals_replayed_on_open;
        report.erase_journals_discarded_on_open = self.erase_journals_discarded_on_open;
        report.key_slots_restored_on_open = self.key_slots_restored_on_open;
        report.epoch_slots_cut_on_open = self.epoch_slots_cut_on_open;
        report.epoch_slots_destroyed_on_open = self.epoch_slots_destroyed_on_open;
        report.epoch_rotations_finished_on_open = self.epoch_rotations_finished_on_open;
        report
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
