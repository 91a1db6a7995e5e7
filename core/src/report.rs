//! What opening an agent found and did.

use crate::corrupt_reason::CorruptReason;

/// What opening an agent found and did; read it after open to learn of any repair. Its last
/// two fields describe the agent as the report is taken: the text a compaction would remove,
/// and the compaction done since the open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Report {
    /// Segment files of the agent.
    pub segments: u64,
    /// Records (lots, memories, recalls) in the log.
    pub records: u64,
    /// Of those, records loaded from a snapshot rather than replayed.
    pub records_from_snapshot: u64,
    /// Why a snapshot present in the folder was not used (damaged, or not matching the log);
    /// open then replayed the whole log instead.
    pub snapshot_ignored: Option<CorruptReason>,
    /// Bytes cut from the end of the active segment: a write that never committed.
    pub dropped_bytes: u64,
    /// Whole records inside those bytes that were cut with them.
    pub dropped_records: u64,
    /// Lots and memories whose text an interrupted Erase had left on disk, erased at open.
    pub erasures_completed_on_open: u64,
    /// Temporary files of an interrupted rewrite, removed at open.
    pub temporary_files_removed: u64,
    /// Segments started at open. A roll now makes the next segment durable before it seals
    /// the one before, so a seal without its next segment is `Corrupt` and this stays zero; it
    /// is kept so that reports keep their fields.
    pub segments_started_on_open: u64,
    /// Rolls a crash interrupted after the next segment was made but before the seal of the
    /// one before it was durable: the next segment, holding nothing but its header, was
    /// removed, and the one before it is active again.
    pub unfinished_rolls_undone_on_open: u64,
    /// Erase journals found at open and applied: a crash came while an erasure in place was
    /// overwriting records, and open finished the overwrites before reading any segment.
    pub erase_journals_replayed_on_open: u64,
    /// Erase journals found at open that were not whole (a crash while writing one, before any
    /// overwrite), removed; the erasure itself was then done again from its recall record.
    pub erase_journals_discarded_on_open: u64,
    /// Slots of an encrypted agent's key table that open wrote again from the records that
    /// carry their keys: slots a crash lost before the key table was synced, or damaged ones.
    pub key_slots_restored_on_open: u64,
    /// Key table slots past an encrypted agent's last node, cut at open: an append's slots
    /// whose records a crash lost.
    pub key_slots_cut_on_open: u64,
    /// Epoch slots cut from the end of an encrypted agent's epoch file: a torn slot that a
    /// crash left while a new epoch was being added, before anything was sealed under it.
    pub epoch_slots_cut_on_open: u64,
    /// Older epoch slots of an encrypted agent that failed their check (torn while an Erase
    /// destroyed them, or changed since) and were written again as destroyed.
    pub epoch_slots_destroyed_on_open: u64,
    /// Rotations of an encrypted agent's epochs that an Erase began and a crash cut short,
    /// finished at open: a new epoch started, the older ones destroyed, or both.
    pub epoch_rotations_finished_on_open: u64,
    /// Recalled lots and memories whose text is still in the files when the report is taken:
    /// what a compaction would take out (automatic compaction starts at
    /// `Options::auto_compact_dead_nodes`).
    pub dead_text_nodes: u64,
    /// Segments rewritten by compaction since the open, by hand or by itself.
    pub segments_compacted: u64,
}

impl Report {
    /// Whether open repaired anything (cut a torn write, finished an erasure, cleaned up,
    /// wrote key slots again).
    #[must_use]
    pub fn repaired_anything(&self) -> bool {
        self.dropped_bytes > 0
            || self.erasures_completed_on_open > 0
            || self.temporary_files_removed > 0
            || self.segments_started_on_open > 0
            || self.unfinished_rolls_undone_on_open > 0
            || self.erase_journals_replayed_on_open > 0
            || self.erase_journals_discarded_on_open > 0
            || self.key_slots_restored_on_open > 0
            || self.key_slots_cut_on_open > 0
            || self.epoch_slots_cut_on_open > 0
            || self.epoch_slots_destroyed_on_open > 0
            || self.epoch_rotations_finished_on_open > 0
    }
}
