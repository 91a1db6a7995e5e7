//! Erase by redaction in place: each record whose text must go is overwritten where it lies,
//! keeping its length (erased flag set, salt, length and content turned to zeros, checksum
//! recomputed), and the commit marker of its durable write gets the new batch checksum.
//!
//! Every overwrite is first written to the erase journal, made durable (temporary file, sync,
//! rename, folder sync) before the first byte of a segment changes; then the overwrites are
//! applied, every touched segment synced, and the journal removed, durably. Open re-applies a
//! journal it finds before it reads any segment, so a crash among the overwrites is finished,
//! never mistaken for damage or for a torn write. Records do not move: the graph's locations
//! and the snapshot stay valid.

use alloc::vec;
use alloc::vec::Vec;

use super::files::read_all;
use super::{io_error, too_large_to_read, AgentEngine, StorageMisbehaved};
use crate::checksum::crc32c;
use crate::codec::erase_journal::{EraseJournal, Overwrite};
use crate::codec::record::{self, commit_marker, Body, Identity, COMMIT_BYTES, HEADER_BYTES, RECORD_MAX_BYTES};
use crate::codec::segment_header::SEGMENT_HEADER_BYTES;
use crate::convert::bounded_count_u32;
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::graph::Location;
use crate::limits::BATCH_MAX_BYTES;
use crate::log::names::{erase_journal_path, segment_path};
use crate::storage::{Storage, StorageFile};

/// Bytes at the start of a record that a redaction changes: checksum, length, kind, flags and
/// reserved (the length stays, but it lies between the checksum and the flags).
const FRAME_CHANGED_BYTES: usize = 12;
/// Bytes read at a time while walking from a record to the commit marker of its write.
const WALK_WINDOW_BYTES: u64 = 64 * 1024;
/// The most bytes read back in one piece to check that overwrites landed.
const READ_BACK_SPAN_BYTES: u64 = 64 * 1024;

const _: () = assert!(FRAME_CHANGED_BYTES <= HEADER_BYTES);

/// One durable write read back from a segment: its records, then its commit marker.
struct CommittedWrite {
    segment: u64,
    /// Offset of its first record (the marker's batch start).
    start: u64,
    /// The bytes from `start` to the end of the commit marker, redactions applied as planned.
    bytes: Vec<u8>,
    /// The marker's identity, record count and chain hash, which a redaction does not change.
    marker_identity: Identity,
    record_count: u32,
    chain: Hash,
}

impl CommittedWrite {
    fn marker_offset(&self) -> u64 {
        self.start + (self.bytes.len() - COMMIT_BYTES) as u64
    }

    /// Redacts, in `bytes`, the record of `id` at `offset`, and adds to `overwrites` the one
    /// stretch that redacts it on disk. Returns false if it was already redacted.
    fn redact(&mut self, offset: u64, id: u64, path: &str, overwrites: &mut Vec<Overwrite>) -> Result<bool, Error> {
        let corrupt = |reason| Error::Corrupt { file: alloc::string::String::from(path), offset, reason };
        let batch_end = self.bytes.len() - COMMIT_BYTES;
        let at = offset.checked_sub(self.start).and_then(|at| usize::try_from(at).ok());
        let at = at.ok_or(corrupt(CorruptReason::RecordOutsideWrite))?;
        let slot = self.bytes.get_mut(at..batch_end).ok_or(corrupt(CorruptReason::RecordOutsideWrite))?;
        let (found, length) = record::decode(slot).map_err(&corrupt)?;
        let found_id = match found.body {
            Body::Lot { id, .. } | Body::Memory { id, .. } | Body::Vector { id, .. } => Some(id),
            Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Commit { .. }
            | Body::Seal { .. }
            | Body::Member { .. }
            | Body::Shared { .. } => None,
        };
        if found_id != Some(id) || found.identity.segment != self.segment {
            return Err(corrupt(CorruptReason::RecordHoldsAnotherId));
        }
        let Some(content) = found.content().filter(|content| content.present.is_some()) else {
            return Ok(false);
        };
        let mut redacted = Vec::with_capacity(length);
        found.redacted_in_place().encode(&mut redacted);
        let text_start = length - content.present_bytes();
        // Only the frame and the text may change: the rest is written again as it is.
        let only_frame_and_text = redacted.len() == length
            && redacted.get(FRAME_CHANGED_BYTES..text_start) == slot.get(FRAME_CHANGED_BYTES..text_start)
            && redacted.get(text_start..).is_some_and(|text| text.iter().all(|byte| *byte == 0));
        if !only_frame_and_text {
            return Err(corrupt(CorruptReason::RedactionChangesMoreThanFrameAndText));
        }
        // One overwrite per record, one write call: the record up to its text (its new frame,
        // and the fields that stay, written again as they are), then the zeros.
        let literal = redacted.get(..text_start).unwrap_or_default().to_vec();
        let zeros = bounded_count_u32(content.present_bytes())?;
        overwrites.push(Overwrite { segment: self.segment, offset, literal, zeros });
        if let Some(target) = slot.get_mut(..length) {
            target.copy_from_slice(&redacted);
        }
        Ok(true)
    }

    /// The commit marker for the write as redacted: same chain hash, new batch checksum.
    fn new_marker(&self) -> Overwrite {
        let batch = self.bytes.get(..self.bytes.len() - COMMIT_BYTES).unwrap_or_default();
        let mut marker = Vec::with_capacity(COMMIT_BYTES);
        commit_marker(self.marker_identity, self.start, batch, self.record_count, self.chain).encode(&mut marker);
        Overwrite { segment: self.segment, offset: self.marker_offset(), literal: marker, zeros: 0 }
    }
}

/// The bytes from `from` to the end of the first commit marker at or after it, read in windows
/// while walking record by record, and the marker's offset.
fn read_to_commit_marker<F: StorageFile>(file: &F, path: &str, from: u64) -> Result<(u64, Vec<u8>), Error> {
    let corrupt = |offset| Error::Corrupt {
        file: alloc::string::String::from(path),
        offset,
        reason: CorruptReason::NoCommitMarkerAfterRecord,
    };
    let file_length = file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
    let mut walked: Vec<u8> = Vec::new();
    let mut position = from;
    loop {
        let at = usize::try_from(position - from).map_err(|_| corrupt(position))?;
        // Enough for a whole commit marker, so the one that ends the walk is read already.
        while walked.len() < at.saturating_add(COMMIT_BYTES) {
            let next = from + walked.len() as u64;
            let length = file_length.saturating_sub(next).min(WALK_WINDOW_BYTES) as usize;
            if length == 0 {
                break;
            }
            let start = walked.len();
            walked.resize(start + length, 0);
            let window = walked.get_mut(start..).unwrap_or_default();
            file.read_at(next, window).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
        }
        let header = walked.get(at..).filter(|rest| rest.len() >= HEADER_BYTES).ok_or(corrupt(position))?;
        if record::looks_like_commit(header) {
            if walked.len() < at + COMMIT_BYTES {
                return Err(corrupt(position));
            }
            walked.truncate(at + COMMIT_BYTES);
            return Ok((position, walked));
        }
        let length = record::claimed_length(header).unwrap_or(0);
        if (length as usize) < HEADER_BYTES || position - from > BATCH_MAX_BYTES as u64 {
            return Err(corrupt(position));
        }
        position += u64::from(length);
    }
}

/// Writes the overwrites of one segment file and syncs it. Every stretch must lie inside the
/// file: they all cover committed records, which were durable before the journal was written.
pub(super) fn overwrite_segment<F: StorageFile>(
    file: &mut F,
    path: &str,
    overwrites: &[&Overwrite],
) -> Result<(), Error> {
    let length = file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
    if let Some(outside) = overwrites.iter().find(|overwrite| !matches!(overwrite.end(), Some(end) if end <= length)) {
        let reason = CorruptReason::EraseJournalOverwritePastSegmentEnd;
        return Err(Error::Corrupt { file: alloc::string::String::from(path), offset: outside.offset, reason });
    }
    for overwrite in overwrites {
        file.write_at(overwrite.offset, &overwrite.bytes())
            .map_err(|error| io_error(StorageOperation::Overwriting, path, error))?;
    }
    file.sync().map_err(|error| io_error(StorageOperation::Syncing, path, error))?;
    check_overwrites_landed(file, path, overwrites)
}

/// Reads back every overwritten stretch: a write that silently went elsewhere would leave the
/// text in place while the Erase reported success. A mismatch is an error, so the journal
/// stays, the handle is poisoned, and the next open applies the journal again.
fn check_overwrites_landed<F: StorageFile>(file: &F, path: &str, overwrites: &[&Overwrite]) -> Result<(), Error> {
    let mut rest = overwrites;
    while let Some(first) = rest.first() {
        // Stretches close together are read back in one piece: the records of one write and
        // its commit marker, and the writes near them.
        let start = first.offset;
        let limit = start.saturating_add(READ_BACK_SPAN_BYTES);
        let count = rest
            .iter()
            .take_while(|overwrite| overwrite.offset >= start && overwrite.end().is_some_and(|end| end <= limit))
            .count()
            .max(1);
        let (group, later) = rest.split_at(count.min(rest.len()));
        let end = group.iter().filter_map(|overwrite| overwrite.end()).max().unwrap_or(start);
        let length = usize::try_from(end - start).map_err(|_| too_large_to_read(end - start))?;
        let mut read = vec![0u8; length];
        file.read_at(start, &mut read).map_err(|error| io_error(StorageOperation::ReadingBack, path, error))?;
        for overwrite in group {
            let expected = overwrite.bytes();
            let at = usize::try_from(overwrite.offset - start).unwrap_or(usize::MAX);
            let landed = read.get(at..).and_then(|tail| tail.get(..expected.len()));
            if landed != Some(expected.as_slice()) {
                return Err(io_error(
                    StorageOperation::ReadingBack,
                    path,
                    StorageMisbehaved("an overwrite did not reach its place"),
                ));
            }
        }
        rest = later;
    }
    Ok(())
}

/// The segments `overwrites` touch, ascending, each once.
pub(super) fn touched_segments(overwrites: &[Overwrite]) -> Vec<u64> {
    let mut segments: Vec<u64> = overwrites.iter().map(|overwrite| overwrite.segment).collect();
    segments.sort_unstable();
    segments.dedup();
    segments
}

/// The overwrites meant for `segment`.
pub(super) fn overwrites_of(overwrites: &[Overwrite], segment: u64) -> Vec<&Overwrite> {
    overwrites.iter().filter(|overwrite| overwrite.segment == segment).collect()
}

impl<S: Storage> AgentEngine<S> {
    /// Erases, where they lie, the salt and text of every record an Erase covers that still
    /// holds them; returns how many records were redacted.
    pub(crate) fn erase_in_place(&mut self) -> Result<u64, Error> {
        if self.sealing.is_some() {
            return self.erase_by_destroying_keys(&[]);
        }
        let mut doomed = Vec::new();
        for id in self.graph.content_to_remove(false) {
            doomed.push((self.graph.location(id)?, id));
        }
        let doomed_vectors: Vec<u64> = self.graph.vectors_to_remove(false).collect();
        if !doomed_vectors.is_empty() {
            let index = self.search_index()?;
            for id in &doomed_vectors {
                doomed.extend(index.vector_records_of(*id).iter().map(|location| (*location, *id)));
            }
        }
        if doomed.is_empty() {
            for id in doomed_vectors {
                self.graph.set_vector_on_disk(id, false);
            }
            return Ok(0);
        }
        doomed.sort_unstable_by_key(|(location, _)| (location.segment, location.offset));
        let (overwrites, redacted) = self.plan_redactions(&doomed)?;
        if !overwrites.is_empty() {
            let journal = EraseJournal { agent: self.agent, overwrites };
            self.replace_file(&erase_journal_path(&self.folder), &journal.encode())?;
            self.apply_to_open_segments(&journal.overwrites)?;
            self.remove_erase_journal()?;
        }
        // A record found already redacted (the graph came from a snapshot taken before) is
        // simply marked so.
        for id in doomed_vectors {
            self.graph.set_vector_on_disk(id, false);
            if let Some(index) = self.search.as_mut() {
                index.vector_records_erased(id);
            }
        }
        for (location, id) in doomed {
            if self.graph.location(id)? == location {
                self.graph.set_location(id, location, false);
            }
        }
        self.snapshot_stale = true;
        Ok(redacted)
    }

    /// Finishes, at open, the erasures the log asks for: records the graph marks as holding
    /// text an Erase covers. A graph loaded from a snapshot taken before an Erase marks records
    /// that were erased since: each is read alone first, so that finding them costs one small
    /// read each rather than a read of its whole write. Returns how many records were redacted.
    pub(crate) fn finish_erasures(&mut self) -> Result<u64, Error> {
        if self.sealing.is_some() {
            return self.finish_key_erasures();
        }
        let marked: Vec<u64> = self.graph.content_to_remove(false).collect();
        self.snapshot_stale |= !marked.is_empty();
        for id in marked {
            let location = self.graph.location(id)?;
            if self.is_already_erased(location, id)? {
                self.graph.set_location(id, location, false);
            }
        }
        self.erase_in_place()
    }

    /// Whether the record of `id` at `location` decodes whole, checksum included, with its
    /// content erased. Anything else (text present, or a record that fails to decode) is left to
    /// the erasure, which reads and checks the whole write.
    fn is_already_erased(&self, location: Location, id: u64) -> Result<bool, Error> {
        let segment = u64::from(location.segment);
        let path = segment_path(&self.folder, segment);
        let offset = u64::from(location.offset);
        let read = self.with_segment(segment, &path, |file, path| {
            let mut header = [0u8; HEADER_BYTES];
            file.read_at(offset, &mut header).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
            let length = record::claimed_length(&header).unwrap_or(0) as usize;
            if !(HEADER_BYTES..=RECORD_MAX_BYTES).contains(&length) {
                return Ok(None);
            }
            let mut bytes = vec![0u8; length];
            file.read_at(offset, &mut bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
            Ok(Some(bytes))
        })?;
        let Some(bytes) = read else { return Ok(false) };
        let Ok((found, _)) = record::decode(&bytes) else { return Ok(false) };
        let erased = found.content().is_some_and(|content| content.present.is_none());
        let same_id =
            matches!(found.body, Body::Lot { id: found_id, .. } | Body::Memory { id: found_id, .. } if found_id == id);
        Ok(erased && same_id && found.identity.segment == segment && found.identity.agent == self.agent)
    }

    /// The overwrites that redact the records of `doomed` (sorted by location) and fix the
    /// commit markers of their writes; and how many records they redact.
    fn plan_redactions(&self, doomed: &[(Location, u64)]) -> Result<(Vec<Overwrite>, u64), Error> {
        let mut overwrites = Vec::new();
        let mut redacted = 0;
        let mut rest = doomed;
        while let Some((first, _)) = rest.first() {
            let segment = u64::from(first.segment);
            let path = segment_path(&self.folder, segment);
            let mut write = self.committed_write_holding(segment, u64::from(first.offset), &path)?;
            let marker_offset = write.marker_offset();
            let inside = |(location, _): &&(Location, u64)| {
                u64::from(location.segment) == segment && u64::from(location.offset) < marker_offset
            };
            let count = rest.iter().take_while(inside).count().max(1);
            let (here, later) = rest.split_at(count.min(rest.len()));
            let before = overwrites.len();
            for (location, id) in here {
                if write.redact(u64::from(location.offset), *id, &path, &mut overwrites)? {
                    redacted += 1;
                }
            }
            if overwrites.len() > before {
                overwrites.push(write.new_marker());
            }
            rest = later;
        }
        Ok((overwrites, redacted))
    }

    /// Reads the durable write holding the record at `offset` of `segment`, after checking its
    /// commit marker and batch checksum: a damaged write is refused, never re-blessed with a
    /// new checksum.
    fn committed_write_holding(&self, segment: u64, offset: u64, path: &str) -> Result<CommittedWrite, Error> {
        let corrupt = |offset, reason| Error::Corrupt { file: alloc::string::String::from(path), offset, reason };
        let (marker_offset, walked) =
            self.with_segment(segment, path, |file, path| read_to_commit_marker(file, path, offset))?;
        let marker = walked.get(walked.len().saturating_sub(COMMIT_BYTES)..).unwrap_or_default();
        let (found, _) = record::decode(marker).map_err(|error| corrupt(marker_offset, error))?;
        let Body::Commit { batch_start, batch_crc, record_count, chain } = found.body else {
            return Err(corrupt(marker_offset, CorruptReason::NoCommitMarkerAfterRecord));
        };
        let placed = found.identity.agent == self.agent && found.identity.segment == segment;
        if !placed || !(SEGMENT_HEADER_BYTES as u64..=offset).contains(&batch_start) || marker_offset == offset {
            return Err(corrupt(offset, CorruptReason::RecordNotInsideCommittedWrite));
        }
        // The walk read from the record on; what the write holds before it is read now.
        let before =
            usize::try_from(offset - batch_start).map_err(|_| corrupt(batch_start, CorruptReason::WriteTooLarge))?;
        let mut bytes = vec![0u8; before];
        self.with_segment(segment, path, |file, path| {
            file.read_at(batch_start, &mut bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))
        })?;
        bytes.extend_from_slice(&walked);
        let batch = bytes.get(..bytes.len() - COMMIT_BYTES).unwrap_or_default();
        if crc32c(batch) != batch_crc {
            return Err(corrupt(batch_start, CorruptReason::CommitMarkerDoesNotMatchBatch));
        }
        Ok(CommittedWrite { segment, start: batch_start, bytes, marker_identity: found.identity, record_count, chain })
    }

    /// Applies `overwrites` through the engine's segment files, syncing each one touched
    /// through the handle that wrote it.
    fn apply_to_open_segments(&mut self, overwrites: &[Overwrite]) -> Result<(), Error> {
        for segment in touched_segments(overwrites) {
            let path = segment_path(&self.folder, segment);
            let here = overwrites_of(overwrites, segment);
            self.with_segment_mut(segment, &path, |file, path| overwrite_segment(file, path, &here))?;
        }
        Ok(())
    }

    /// Finishes the overwrites of an erasure that a crash interrupted, before any segment of
    /// the `segment_count` is read: a torn overwrite would otherwise look like damage, or like
    /// a torn write to cut. Applying a journal twice writes the same bytes twice, so a crash
    /// during this is finished by the next open. A journal that fails its checks was never
    /// renamed into place whole, so no overwrite had begun: it is removed, and the Erase
    /// recall record, still in the log, has the erasure done again after the replay.
    pub(super) fn replay_erase_journal(&mut self, segment_count: u64) -> Result<(), Error> {
        let path = erase_journal_path(&self.folder);
        if !self.storage.exists(&path).map_err(|error| io_error(StorageOperation::Checking, &path, error))? {
            return Ok(());
        }
        if mutant!(SkipEraseJournalReplay) {
            return self.remove_erase_journal();
        }
        let file =
            self.storage.open_file(&path, false).map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
        let bytes = read_all(&file, &path)?;
        drop(file);
        match EraseJournal::decode(&bytes) {
            Ok(journal) => {
                if journal.agent != self.agent {
                    return Err(Error::Corrupt {
                        file: path,
                        offset: 16,
                        reason: CorruptReason::EraseJournalOfAnotherAgent,
                    });
                }
                // The Erase that wrote the journal may have failed at the folder sync after the
                // rename: the name is then in the cache only. It must be durable before any
                // segment byte changes, or a crash could keep overwrites and lose the journal.
                self.storage
                    .sync_folder(&self.folder)
                    .map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))?;
                self.apply_journal(&journal.overwrites, segment_count, &path)?;
                self.report.erase_journals_replayed_on_open += 1;
            }
            Err(_) => self.report.erase_journals_discarded_on_open += 1,
        }
        self.remove_erase_journal()
    }

    /// Applies a journal's overwrites at open, through files opened for the purpose.
    fn apply_journal(&self, overwrites: &[Overwrite], segment_count: u64, journal_path: &str) -> Result<(), Error> {
        for segment in touched_segments(overwrites) {
            if !(1..=segment_count).contains(&segment) {
                let reason = CorruptReason::EraseJournalNamesMissingSegment;
                return Err(Error::Corrupt { file: alloc::string::String::from(journal_path), offset: 0, reason });
            }
            let path = segment_path(&self.folder, segment);
            let mut file = self
                .storage
                .open_file(&path, false)
                .map_err(|error| io_error(StorageOperation::Opening, &path, error))?;
            overwrite_segment(&mut file, &path, &overwrites_of(overwrites, segment))?;
        }
        Ok(())
    }

    /// Removes the erase journal, durably: once its overwrites are synced it must never be
    /// applied again, since a later compaction moves the records it points at.
    pub(super) fn remove_erase_journal(&self) -> Result<(), Error> {
        let path = erase_journal_path(&self.folder);
        self.storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
        self.storage.sync_folder(&self.folder).map_err(|error| io_error(StorageOperation::Syncing, &self.folder, error))
    }
}
