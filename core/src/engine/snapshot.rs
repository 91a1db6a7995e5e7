//! Snapshots: the graph saved at a committed point of the log, so that open replays only what
//! follows. A snapshot is a cache: if it is damaged, or does not match the log at its point, open
//! ignores it, says so in the report, and replays everything.

use super::active_log::PoisonCause;
use super::{io_error, AgentEngine};
use crate::codec::record::{self, Body, COMMIT_BYTES};
use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::codec::snapshot_file::{SnapshotFile, SnapshotPoint};
use crate::corrupt_reason::CorruptReason;
use crate::engine::shared_nodes::SharedNodes;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::graph::Graph;
use crate::log::names::{segment_path, snapshot_path};
use crate::storage::{NameKind, Storage, StorageFile};

/// What open learns from the snapshot file.
pub(crate) struct LoadedSnapshot {
    /// The point, graph and shared nodes to resume from, if the snapshot matches the log.
    pub usable: Option<(SnapshotPoint, Graph, SharedNodes)>,
    /// The point of a whole snapshot of this agent, used or not: the log reached it once.
    pub floor: Option<SnapshotPoint>,
}

/// An encrypted agent's replay opens a key for every record it reads, several times the work
/// of a plaintext one's per byte, so its snapshots come after this share of the bytes.
const SEALED_SNAPSHOT_SHARE: u64 = 8;

impl<S: Storage> AgentEngine<S> {
    /// Saves the graph at the current committed point (durably: temporary file, sync, rename,
    /// folder sync). It holds no content.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - `Error::Corrupt` (`SnapshotNotAPlainFile`) when open found the snapshot's name holding
    ///   a folder, a link or anything else but a plain file: it is left alone, never replaced.
    /// - `Error::Io` when writing the snapshot fails before its rename, `Error::OutcomeUnknown`
    ///   from the rename on. The log is untouched either way.
    pub fn snapshot(&mut self) -> Result<(), Error> {
        self.check_writable()?;
        if self.space.is_some() {
            // The snapshot's layout holds no members or authors: the open of a space replays
            // its log.
            return Ok(());
        }
        if self.snapshot_name_taken {
            let reason = CorruptReason::SnapshotNotAPlainFile;
            return Err(Error::Corrupt { file: snapshot_path(&self.folder), offset: 0, reason });
        }
        let point = SnapshotPoint {
            agent: self.agent,
            segment: self.active_segment(),
            offset: self.log.write_offset(),
            sequence: self.log.sequence(),
            chain: self.log.chain(),
        };
        if let Some(sealing) = self.sealing.as_mut() {
            // Open writes slots again only from records after the snapshot's point: those
            // before it must be durable first.
            sealing.sync_key_table()?;
        }
        self.graph.fold_children();
        let bytes = SnapshotFile::encode(&point, self.graph.parts(), &self.shared.to_snapshot());
        self.replace_file(&snapshot_path(&self.folder), &bytes)?;
        self.bytes_since_snapshot = 0;
        self.snapshot_stale = false;
        Ok(())
    }

    /// Takes a snapshot if the log grew enough since the last one, or an Erase changed flags
    /// the last one holds (unless snapshots are off). A failure here costs only
    /// a longer open later, so it is not an error of the write that triggered it.
    pub(crate) fn snapshot_if_due(&mut self) {
        if self.snapshot_due() {
            let _ = self.snapshot();
        }
    }

    /// Whether a snapshot would be taken now: the log grew enough, or an Erase changed flags
    /// the last one holds, and the engine is fit to write.
    fn snapshot_due(&self) -> bool {
        let threshold = match (self.sealing.is_some(), self.options.snapshot_after_bytes) {
            (_, u64::MAX) => u64::MAX,
            (true, bytes) => bytes / SEALED_SNAPSHOT_SHARE,
            (false, bytes) => bytes,
        };
        let due = self.bytes_since_snapshot >= threshold || (self.snapshot_stale && threshold != u64::MAX);
        due && !self.log.is_poisoned() && !self.deleted && !self.snapshot_name_taken
    }

    /// Takes the snapshot that closing would take, if one is due, and says whether it failed.
    ///
    /// # Errors
    ///
    /// `Error::Io` when writing the snapshot fails before its rename, `Error::OutcomeUnknown`
    /// from the rename on; the log itself is untouched, so a failure costs only a longer open
    /// later.
    pub fn save_snapshot_if_due(&mut self) -> Result<(), Error> {
        if self.snapshot_due() {
            return self.snapshot();
        }
        Ok(())
    }

    /// Closes the engine: takes the snapshot that is due, if any, and returns its error, which
    /// dropping the engine would have ignored.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::save_snapshot_if_due`].
    pub fn close(mut self) -> Result<(), Error> {
        let outcome = self.save_snapshot_if_due();
        // The engine goes away now: marking it unfit to write stops `Drop` from trying again.
        self.log.poison(PoisonCause::Closed);
        outcome
    }

    /// Checks, once, a graph loaded from a snapshot against the log, before an Erase or a
    /// compaction computes from it what to destroy: a snapshot with valid checksums whose edges
    /// or flags lie would otherwise have live text erased on its word. Costs one read of the
    /// log, the first time only. A failure poisons the engine.
    pub(crate) fn confirm_graph_before_destroying(&mut self) -> Result<(), Error> {
        if self.graph_unconfirmed {
            if let Err(error) = self.verify() {
                // Nothing was written, but the engine cannot go on from a graph it could not
                // confirm: later writes are refused until a reopen.
                self.log.poison(PoisonCause::GraphNotConfirmed);
                return Err(error);
            }
            self.graph_unconfirmed = false;
        }
        Ok(())
    }

    /// Removes the snapshot, durably, before a rewrite moves the records it points at.
    pub(crate) fn remove_snapshot(&mut self) -> Result<(), Error> {
        let path = snapshot_path(&self.folder);
        // Only a plain file there is a snapshot: anything else is left where it is.
        if self
            .storage
            .holds(&path, NameKind::File)
            .map_err(|error| io_error(StorageOperation::Checking, &path, error))?
        {
            self.storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
            self.storage
                .sync_folder(&self.folder)
                .map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))?;
        }
        // Without a snapshot, open replays the whole log: count all of it as due.
        let sealed_bytes = (self.active_segment() - 1).saturating_mul(self.options.segment_size_max_bytes);
        self.bytes_since_snapshot = sealed_bytes.saturating_add(self.log.write_offset());
        Ok(())
    }

    /// The snapshot and the graph it holds, if there is one that matches the log at its point
    /// among the `segment_count` segments. Why a snapshot was refused goes to the report.
    ///
    /// Also the point of any whole snapshot of this agent, used or not: it was taken at a
    /// durable commit, so a log that ends before it has lost committed records.
    pub(crate) fn load_snapshot(&mut self, segment_count: u64) -> Result<LoadedSnapshot, Error> {
        let path = snapshot_path(&self.folder);
        if self.space.is_some() {
            return Ok(LoadedSnapshot { usable: None, floor: None });
        }
        if !self.storage.exists(&path).map_err(|error| io_error(StorageOperation::Checking, &path, error))? {
            return Ok(LoadedSnapshot { usable: None, floor: None });
        }
        // A snapshot is a cache: a folder, a link or anything else but a plain file at its name
        // is not one, and the agent opens without it, as for any other name cheesedb did not
        // make, leaving it where it is.
        if !self
            .storage
            .holds(&path, NameKind::File)
            .map_err(|error| io_error(StorageOperation::Checking, &path, error))?
        {
            self.snapshot_name_taken = true;
            self.report.snapshot_ignored = Some(CorruptReason::SnapshotNotAPlainFile);
            return Ok(LoadedSnapshot { usable: None, floor: None });
        }
        let file =
            self.storage.open_file(&path, false).map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
        let length = file.len().map_err(|error| io_error(StorageOperation::Measuring, &path, error))?;
        let read = SnapshotFile::read(length, |offset, out| file.read_at(offset, out).ok());
        let floor = read.as_ref().ok().map(|snapshot| snapshot.point).filter(|point| point.agent == self.agent);
        let checked = read.and_then(|snapshot| {
            if snapshot.point.agent != self.agent || !(1..=segment_count).contains(&snapshot.point.segment) {
                return Err(CorruptReason::SnapshotBelongsElsewhere);
            }
            self.point_matches_log(&snapshot.point)?;
            let graph = Graph::from_parts(
                snapshot.slots,
                snapshot.leg_words,
                snapshot.leg_node_ends,
                snapshot.child_row_starts,
                snapshot.child_row,
            )?;
            // Open never erases on a snapshot's word: every erasure a snapshot may carry was
            // finished before it was taken, so one that asks for text still on disk to go is
            // not to be trusted, and the log, whose recall records alone justify an erasure,
            // is replayed instead.
            if graph.content_to_remove(false).next().is_some() && !mutant!(EraseOnSnapshotWord) {
                return Err(CorruptReason::SnapshotErasesTextLogDoesNotErase);
            }
            let shared = SharedNodes::from_snapshot(&snapshot.shared, &graph)?;
            Ok((snapshot.point, graph, shared))
        });
        match checked {
            Ok(loaded) => Ok(LoadedSnapshot { usable: Some(loaded), floor }),
            Err(reason) => {
                self.report.snapshot_ignored = Some(reason);
                Ok(LoadedSnapshot { usable: None, floor })
            }
        }
    }

    /// Whether the log, at the snapshot's point, ends a durable write with the snapshot's
    /// sequence and chain hash: this binds the snapshot to the hash chain.
    fn point_matches_log(&self, point: &SnapshotPoint) -> Result<(), CorruptReason> {
        let path = segment_path(&self.folder, point.segment);
        let file = self.storage.open_file(&path, false).map_err(|_| CorruptReason::SnapshotSegmentCannotBeOpened)?;
        let length = file.len().map_err(|_| CorruptReason::SnapshotSegmentCannotBeMeasured)?;
        if point.offset > length || point.offset < SEGMENT_HEADER_BYTES as u64 {
            return Err(CorruptReason::SnapshotPointLiesOutsideSegment);
        }
        if point.offset == SEGMENT_HEADER_BYTES as u64 {
            let mut header = [0u8; SEGMENT_HEADER_BYTES];
            file.read_at(0, &mut header).map_err(|_| CorruptReason::SnapshotSegmentHeaderUnreadable)?;
            let header = SegmentHeader::decode(&header)?;
            let same = header.sequence_before == point.sequence && header.chain_before == point.chain;
            return if same { Ok(()) } else { Err(CorruptReason::SnapshotDoesNotMatchSegmentItStarts) };
        }
        let mut marker = [0u8; COMMIT_BYTES];
        let marker_offset =
            point.offset.checked_sub(COMMIT_BYTES as u64).ok_or(CorruptReason::SnapshotPointInsideHeader)?;
        file.read_at(marker_offset, &mut marker).map_err(|_| CorruptReason::SnapshotCommitMarkerUnreadable)?;
        let (record, _) = record::decode(&marker).map_err(|_| CorruptReason::NoCommitMarkerAtSnapshotPoint)?;
        match record.body {
            Body::Commit { chain, .. }
                if chain == point.chain
                    && record.identity.sequence == point.sequence
                    && record.identity.agent == self.agent
                    && record.identity.segment == point.segment =>
            {
                Ok(())
            }
            _ => Err(CorruptReason::SnapshotDiffersFromHashChain),
        }
    }
}

/// Dropping an engine takes the snapshot that is due, if any, and ignores a failure to write it
/// (the log is complete without it; open then replays more). Call [`AgentEngine::close`] to
/// learn of that failure.
impl<S: Storage> Drop for AgentEngine<S> {
    fn drop(&mut self) {
        self.snapshot_if_due();
    }
}
