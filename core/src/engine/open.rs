//! Opening an agent: finish the overwrites of an interrupted erasure in place, replay every
//! segment, cut a torn write at the end of the active one, and finish any erasure a crash
//! interrupted, before anything is served.

use alloc::string::String;
use alloc::vec::Vec;

use super::files::{read_all, read_from};
use super::replay::apply_record;
use super::sealed_open::{erase_sequence, replay_sealing, SlotsToRestore};
use super::sealing::Sealing;
use super::{io_error, AgentEngine};
use crate::codec::segment_header::{write_margin_bytes, SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::codec::snapshot_file::SnapshotPoint;
use crate::convert::segment_offset_usize;
use crate::corrupt_reason::CorruptReason;
use crate::engine::shared_nodes::SharedNodes;
use crate::engine::space_ledger::SpaceLedger;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::graph::Graph;
use crate::limits::Options;
use crate::log::names::{parse_segment_name, segment_path, TEMPORARY_SUFFIX};
use crate::log::scan::{
    check_header, count_whole_records, find_valid_commit, scan_records_after, Damage, Expected, ScanEnd,
};
use crate::seal::AgentSecrets;
use crate::storage::{NameKind, Storage, StorageFile};

impl<S: Storage> AgentEngine<S> {
    /// Opens an existing agent.
    ///
    /// # Errors
    ///
    /// - `Error::LimitExceeded` when `options` are out of range.
    /// - `Error::Corrupt` when a file of the agent fails a check (or a segment is missing).
    /// - `Error::Io` when the storage fails.
    pub fn open(storage: S, agent: u64, options: Options) -> Result<AgentEngine<S>, Error> {
        AgentEngine::open_with(storage, agent, options, None, false)
    }

    /// Opens an existing encrypted agent with the keys its token yields.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::open`]; `Error::Corrupt` also when a key file fails a check, or an
    /// epoch key does not open with `secrets`.
    pub fn open_encrypted(
        storage: S,
        agent: u64,
        options: Options,
        secrets: AgentSecrets,
    ) -> Result<AgentEngine<S>, Error> {
        AgentEngine::open_with(storage, agent, options, Some(secrets), false)
    }

    /// Opens the log of an existing space: its members and authors are replayed with its graph.
    pub(crate) fn open_space(storage: S, space: u64, options: Options) -> Result<AgentEngine<S>, Error> {
        AgentEngine::open_with(storage, space, options, None, true)
    }

    fn open_with(
        storage: S,
        agent: u64,
        options: Options,
        secrets: Option<AgentSecrets>,
        is_space: bool,
    ) -> Result<AgentEngine<S>, Error> {
        let mut engine = AgentEngine::empty(storage, agent, options)?;
        if is_space {
            engine.space = Some(SpaceLedger::default());
        }
        let count = engine.list_segments()?;
        if let Some(secrets) = secrets {
            let sealing = Sealing::open(&engine.storage, &engine.folder, agent, secrets)?;
            engine.report.epoch_slots_cut_on_open = u64::from(sealing.rotation_cut_short());
            engine.report.epoch_slots_destroyed_on_open = sealing.epoch_slots_destroyed_on_open();
            engine.sealing = Some(sealing);
        }
        engine.replay_erase_journal(count)?;
        let loaded = engine.load_snapshot(count)?;
        let (first_replayed, mut resume) = match loaded.usable {
            Some((point, graph, shared)) => (engine.resume_from_snapshot(point, graph, shared)?, Some(point.offset)),
            None => (1, None),
        };
        engine.graph.defer_folds();
        for segment in first_replayed..=count {
            let place = Place {
                active: segment == count,
                sealed_last: segment + 1 == count,
                resume: resume.take(),
                floor: loaded.floor,
            };
            if engine.replay_segment(segment, place)? == Replayed::RollUndone {
                break;
            }
        }
        engine.graph.settle();
        // Segment names open relied on may come from a start whose folder sync failed.
        engine
            .storage
            .sync_folder(&engine.folder)
            .map_err(|error| io_error(StorageOperation::Syncing, &engine.folder, error))?;
        if let Some(sealing) = engine.sealing.as_mut() {
            engine.report.key_slots_cut_on_open = sealing.cut_slots_after(engine.graph.len())?;
        }
        let unfinished = engine.finish_erasures()?;
        engine.report.erasures_completed_on_open = unfinished;
        engine.report.records = engine.log.sequence();
        engine.log.open_for_writes();
        Ok(engine)
    }

    /// Removes leftovers of interrupted rewrites; returns how many segments there are, after
    /// checking they are numbered 1, 2, … with no gap.
    fn list_segments(&mut self) -> Result<u64, Error> {
        let names = self
            .storage
            .list(&self.folder)
            .map_err(|error| io_error(StorageOperation::Listing, &self.folder, error))?;
        let mut numbers = Vec::new();
        for name in names {
            if name.ends_with(TEMPORARY_SUFFIX) {
                let path = alloc::format!("{}/{name}", self.folder);
                // Only a plain file there is a rewrite cheesedb left: a folder or a link of that
                // name is not its own, and is left where it is, as any other name it did not make.
                if !self
                    .storage
                    .holds(&path, NameKind::File)
                    .map_err(|error| io_error(StorageOperation::Checking, &path, error))?
                {
                    continue;
                }
                self.storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
                self.report.temporary_files_removed += 1;
            } else if let Some(number) = parse_segment_name(&name) {
                numbers.push(number);
            }
        }
        if self.report.temporary_files_removed > 0 {
            self.storage
                .sync_folder(&self.folder)
                .map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))?;
        }
        numbers.sort_unstable();
        for (index, number) in numbers.iter().enumerate() {
            if *number != index as u64 + 1 {
                let missing = segment_path(&self.folder, index as u64 + 1);
                return Err(Error::Corrupt { file: missing, offset: 0, reason: CorruptReason::SegmentFileMissing });
            }
        }
        if numbers.is_empty() {
            let missing = segment_path(&self.folder, 1);
            return Err(Error::Corrupt { file: missing, offset: 0, reason: CorruptReason::SegmentFileMissing });
        }
        Ok(numbers.len() as u64)
    }

    /// Takes the graph, shared nodes and position from a snapshot, counting (without reading or
    /// opening) the segments wholly before its point; returns the segment where replay resumes.
    fn resume_from_snapshot(&mut self, point: SnapshotPoint, graph: Graph, shared: SharedNodes) -> Result<u64, Error> {
        self.segments.count_sealed(point.segment.saturating_sub(1));
        self.report.records_from_snapshot = point.sequence;
        self.graph = graph;
        if !mutant!(SnapshotLosesSharedNodes) {
            self.shared = shared;
        }
        self.graph_unconfirmed = true;
        self.log.found_committed_end(point.sequence, point.chain, point.offset);
        Ok(point.segment)
    }

    /// Replays one segment, from just after its header or, with `resume`, from a snapshot's
    /// point inside it. A segment that is not the last must end with its seal, unless the
    /// last one is the empty start of a roll a crash interrupted: that start is removed and this
    /// segment becomes the active one again.
    fn replay_segment(&mut self, segment: u64, place: Place) -> Result<Replayed, Error> {
        let Place { active, sealed_last, resume, floor } = place;
        let path = segment_path(&self.folder, segment);
        let mut file =
            self.storage.open_file(&path, false).map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
        // Resuming at a snapshot's point, only what follows the point is read.
        let (bytes, base) = match resume {
            Some(offset) => (read_from(&file, &path, offset)?, segment_offset_usize(offset)?),
            None => (read_all(&file, &path)?, 0),
        };
        let expected = Expected {
            agent: self.agent,
            segment,
            sequence_before: self.log.sequence(),
            chain_before: self.log.chain(),
        };
        let corrupt = |offset: u64, reason| Error::Corrupt { file: path.clone(), offset, reason };
        let start = resume.map_or(Ok(SEGMENT_HEADER_BYTES), segment_offset_usize)?;
        let mut header = [0u8; SEGMENT_HEADER_BYTES];
        let header_checked = match resume {
            Some(_) => {
                file.read_at(0, &mut header).map_err(|error| io_error(StorageOperation::Reading, &path, error))?;
                // Where the segment began in the log is behind the snapshot's point: only its
                // place is checked here, the point itself was checked against the chain.
                SegmentHeader::decode(&header).map_err(|reason| Damage { offset: 0, reason }).and_then(|found| {
                    let placed = found.agent == self.agent && found.segment == segment;
                    placed
                        .then_some(())
                        .ok_or(Damage { offset: 0, reason: CorruptReason::SegmentHeaderBelongsElsewhere })
                })
            }
            None => {
                if let Some(found) = bytes.get(..SEGMENT_HEADER_BYTES) {
                    header.copy_from_slice(found);
                }
                check_header(&bytes, &expected)
            }
        };
        // Every segment was durable, header and all, before anything named it: the catalog
        // names the agent only after its first segment is synced, and a roll syncs the next
        // segment before it seals the one before. A header that does not check is damage or a
        // file from elsewhere, never a crash state, and nothing of it may be cut.
        if let Err(damage) = header_checked {
            // The mutant takes a foreign header in the newest segment for a torn one, and cuts.
            let foreign_cut = mutant!(TruncateForeignHeader)
                && active
                && resume.is_none()
                && find_valid_commit(&bytes, 0, &expected).is_none();
            if foreign_cut {
                drop(file);
                self.start_segment(segment)?;
                return Ok(Replayed::Continue);
            }
            return Err(corrupt(damage.offset, damage.reason));
        }
        let graph = &mut self.graph;
        let mut space = self.space.as_mut();
        let shared = &mut self.shared;
        let sealing = self.sealing.as_ref();
        let mut restore = SlotsToRestore::default();
        let mut last_erase = self.last_erase_sequence_replayed;
        let end = scan_records_after(&bytes, base, &expected, start, |record, offset| {
            replay_sealing(sealing, record, &mut restore).map_err(|reason| corrupt(offset, reason))?;
            last_erase = erase_sequence(record).or(last_erase);
            apply_record(graph, space.as_deref_mut(), shared, record, offset, &path)
        })?;
        self.last_erase_sequence_replayed = last_erase;
        if let Some(sealing) = self.sealing.as_mut() {
            self.report.key_slots_restored_on_open += restore.write(sealing, &self.graph)?;
        }
        let mut active = active;
        let mut replayed = Replayed::Continue;
        if !active && end.sealed_into.is_none() && self.is_unfinished_roll(segment + 1, &end)? {
            self.undo_unfinished_roll(segment + 1)?;
            active = true;
            replayed = Replayed::RollUndone;
        }
        self.bytes_since_snapshot += end.committed_end - start as u64;
        if active && end.sealed_into.is_some() {
            // A roll syncs the next segment before the seal: a seal proves the next segment
            // existed, so without it committed records are missing.
            let missing = segment_path(&self.folder, segment + 1);
            return Err(Error::Corrupt {
                file: missing,
                offset: 0,
                reason: CorruptReason::SegmentFileMissingAfterSeal,
            });
        }
        if let Some(point) = floor.filter(|point| active && end.sequence < point.sequence) {
            // Checked before anything is cut: a log shorter than a snapshot's point lost
            // committed records, and the open must not destroy what is left of them.
            let file = segment_path(&self.folder, point.segment);
            let reason = CorruptReason::LogEndsBeforeSnapshotPoint;
            return Err(Error::Corrupt { file, offset: point.offset, reason });
        }
        let file_length = (base + bytes.len()) as u64;
        let write_margin = write_margin_bytes(&header);
        if active && write_margin > 0 && file_length < end.committed_end.saturating_add(write_margin) {
            // Every durable write kept the margin free after it, durably, before it began: a
            // file that ends sooner was cut after its last commit, and more may have been lost.
            let reason = CorruptReason::ActiveSegmentCutInsideWriteMargin;
            return Err(corrupt(file_length, reason));
        }
        if active {
            self.log.found_write_margin(write_margin);
        }
        if active && end.is_clean() {
            self.log.found_file_length(file_length);
            // Nothing to cut, but the cache may still hold a write whose sync failed before the
            // last close: make what open is about to serve durable, or a crash could take back
            // ids that were already handed out.
            file.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
        } else if active {
            // Whether the damage is a torn write depends on what follows it anywhere in the
            // file, so this rare case looks at the whole of it.
            let whole = if base == 0 { bytes } else { read_all(&file, &path)? };
            self.cut_torn_tail(&mut file, &whole, &expected, &end, &path)?;
        } else if !end.is_clean() || end.sealed_into != Some(segment + 1) {
            let damage =
                end.damage.map_or((end.committed_end, CorruptReason::SealedSegmentDoesNotEndWithSeal), |damage| {
                    (damage.offset, damage.reason)
                });
            return Err(corrupt(damage.0, damage.1));
        } else if sealed_last {
            // The seal may be in the cache only, after a roll whose sync failed: it must be
            // durable before writes go to the next segment, or a crash would take it back.
            file.sync().map_err(|error| io_error(StorageOperation::Syncing, &path, error))?;
        }
        self.log.found_committed_end(end.sequence, end.chain, end.committed_end);
        // Only the active file stays open; sealed ones are opened again when read.
        if active {
            self.segments.start(segment, file);
        } else {
            drop(file);
            self.segments.count_sealed(segment);
        }
        Ok(replayed)
    }

    /// Whether segment `next`, the last one, is a roll's start that a crash cut short before
    /// the seal of the segment before it (whose scan ended at `end`) was durable: a header
    /// (whole and naming exactly this point of the log, or torn) and no committed write. A
    /// whole header of another identity is not a roll's start.
    fn is_unfinished_roll(&self, next: u64, end: &ScanEnd) -> Result<bool, Error> {
        let path = segment_path(&self.folder, next);
        if !self.storage.exists(&path).map_err(|error| io_error(StorageOperation::Checking, &path, error))? {
            return Ok(false);
        }
        let file =
            self.storage.open_file(&path, false).map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
        let bytes = read_all(&file, &path)?;
        // A later segment than `next` means `next` is not the last: not a roll's start.
        let later = segment_path(&self.folder, next + 1);
        if self.storage.exists(&later).map_err(|error| io_error(StorageOperation::Checking, &later, error))? {
            return Ok(false);
        }
        // Its header and margin of zeros were one write: a crash may have garbled any of it.
        // What no crash can leave there is a committed write, made only after a seal.
        let expected =
            Expected { agent: self.agent, segment: next, sequence_before: end.sequence, chain_before: end.chain };
        if find_valid_commit(&bytes, SEGMENT_HEADER_BYTES as u64, &expected).is_some() {
            return Ok(false);
        }
        let header = bytes.get(..SEGMENT_HEADER_BYTES.min(bytes.len())).unwrap_or_default();
        match SegmentHeader::decode(header) {
            Err(_) => Ok(true),
            Ok(found) => Ok(found
                == SegmentHeader {
                    agent: self.agent,
                    segment: next,
                    sequence_before: end.sequence,
                    chain_before: end.chain,
                }),
        }
    }

    /// Removes, durably, the empty start of a roll a crash interrupted: the segment before it
    /// is active again, and the next roll starts it anew.
    fn undo_unfinished_roll(&mut self, next: u64) -> Result<(), Error> {
        let path = segment_path(&self.folder, next);
        self.storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
        self.storage
            .sync_folder(&self.folder)
            .map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))?;
        self.report.unfinished_rolls_undone_on_open += 1;
        Ok(())
    }

    /// Drops exactly the bytes after the last valid commit marker of the active segment (`end`
    /// is not clean), unless a valid commit marker stands after the damage: then committed data
    /// is damaged, and that is `Corrupt`, never a silent cut.
    fn cut_torn_tail(
        &mut self,
        file: &mut S::File,
        bytes: &[u8],
        expected: &Expected,
        end: &ScanEnd,
        path: &str,
    ) -> Result<(), Error> {
        let damage_offset = end.damage.map_or(end.committed_end, |damage| damage.offset);
        if find_valid_commit(bytes, damage_offset, expected).is_some() && !mutant!(CutAtFirstDamage) {
            let reason = end.damage.map_or(CorruptReason::DamagedRecordBeforeCommitMarker, |damage| damage.reason);
            return Err(Error::Corrupt { file: String::from(path), offset: damage_offset, reason });
        }
        self.report.dropped_bytes += end.data_end - end.committed_end;
        // Every record the cut takes counts, also those after a damaged byte inside the torn
        // write, which the scan stopped before.
        let whole = count_whole_records(bytes, end.committed_end, end.data_end, expected);
        self.report.dropped_records += whole.max(end.uncommitted_records);
        let cut = if self.log.write_margin_bytes() > 0 {
            // The file keeps its length, and with it the margin after the committed end: the
            // torn bytes are turned to zeros where they lie.
            let zeros = alloc::vec![0u8; usize::try_from(end.data_end - end.committed_end).unwrap_or(0)];
            self.log.found_file_length(bytes.len() as u64);
            file.write_at(end.committed_end, &zeros)
        } else {
            self.log.found_file_length(end.committed_end);
            file.set_len(end.committed_end)
        };
        cut.and_then(|()| file.sync()).map_err(|error| io_error(StorageOperation::CuttingTornEnd, path, error))
    }
}

/// Where a segment stands in the replay.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// The last segment: the one writes go to.
    active: bool,
    /// The segment just before the last one: the newest seal is in it.
    sealed_last: bool,
    /// A snapshot's offset inside this segment to resume from.
    resume: Option<u64>,
    /// The point of a whole snapshot of this agent: the log reached it once.
    floor: Option<SnapshotPoint>,
}

/// Whether the replay goes on to the next segment, or the segment just replayed became the
/// last one (the start of an unfinished roll after it was removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replayed {
    Continue,
    RollUndone,
}
