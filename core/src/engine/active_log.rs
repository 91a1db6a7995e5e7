//! The tail of the active log and the poison flag, with one owner.
//!
//! Where the next write goes, how far zeros were written ahead, the margin the active segment
//! promises, the last committed sequence and chain, and whether the engine may still write all
//! change here only. The one durable append (write, sync, keep the margin) is the only write
//! path, so a new caller cannot forget to poison after a failed write or sync; other failures
//! that leave the disk ahead of the graph go through [`ActiveLog::poison`].

use alloc::vec;
use alloc::vec::Vec;

use super::{io_error, outcome_unknown};
use crate::codec::segment_header::SEGMENT_HEADER_BYTES;
use crate::convert::bounded_bytes_usize;
use crate::digest::Hash;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::storage::StorageFile;

/// Why the engine stops writing until a reopen. Named so every place that poisons says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PoisonCause {
    /// Create or open has not finished: the graph may be half built.
    NotOpenYet,
    /// A write or sync of the active segment failed: its bytes may be on disk or not.
    FailedDurableWrite,
    /// Sealing the active segment or trimming it failed: the seal may be on disk.
    FailedRoll,
    /// An Erase stopped after its recall record: the next open finishes it.
    EraseCutShort,
    /// A compaction failed: some segments may already be rewritten.
    CompactionFailed,
    /// A graph loaded from a snapshot could not be confirmed against the log.
    GraphNotConfirmed,
    /// The engine was closed: nothing more may be written through it, not even by `Drop`.
    Closed,
}

/// The tail of one agent's active log and whether it may still be written.
#[derive(Debug)]
pub(super) struct ActiveLog {
    /// Where the next write goes in the active segment.
    write_offset: u64,
    /// The length of the active segment file: zeros past `write_offset` were written ahead so
    /// that a durable write inside them changes no file size and needs no metadata flush.
    allocated_end: u64,
    /// The active segment's write margin (its header's promise): every durable write ends at
    /// least this many bytes before the file's durable end; 0 when it promises none.
    write_margin_bytes: u64,
    /// The sequence of the last committed record.
    sequence: u64,
    /// The chain hash after the last committed record.
    chain: Hash,
    /// Why writes are refused; `None` while the engine may write.
    poison: Option<PoisonCause>,
}

impl ActiveLog {
    /// An empty tail at `chain`, poisoned until create or open has finished, so that dropping a
    /// half-opened engine never writes anything.
    pub(super) fn new(chain: Hash) -> ActiveLog {
        ActiveLog {
            write_offset: 0,
            allocated_end: 0,
            write_margin_bytes: 0,
            sequence: 0,
            chain,
            poison: Some(PoisonCause::NotOpenYet),
        }
    }

    /// Create or open has finished: writes may go to the log.
    pub(super) fn open_for_writes(&mut self) {
        self.poison = None;
    }

    /// Refuses every later write until a reopen; the one place the flag is set.
    pub(super) fn poison(&mut self, cause: PoisonCause) {
        self.poison = Some(cause);
    }

    /// Whether writes are refused.
    pub(super) fn is_poisoned(&self) -> bool {
        self.poison.is_some()
    }

    /// Where the next write goes in the active segment.
    pub(super) fn write_offset(&self) -> u64 {
        self.write_offset
    }

    /// The sequence of the last committed record.
    pub(super) fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The chain hash after the last committed record.
    pub(super) fn chain(&self) -> Hash {
        self.chain
    }

    /// The active segment's write margin.
    pub(super) fn write_margin_bytes(&self) -> u64 {
        self.write_margin_bytes
    }

    /// A segment holding only its header and `write_margin_bytes` of zeros became the active one.
    pub(super) fn start_segment(&mut self, write_margin_bytes: u64) {
        self.write_offset = SEGMENT_HEADER_BYTES as u64;
        self.write_margin_bytes = write_margin_bytes;
        self.allocated_end = self.write_offset + write_margin_bytes;
    }

    /// Open found the log committed up to `write_offset` of the segment it is replaying, at
    /// `sequence` and `chain` (a snapshot's point, or the end of a replayed segment).
    pub(super) fn found_committed_end(&mut self, sequence: u64, chain: Hash, write_offset: u64) {
        self.sequence = sequence;
        self.chain = chain;
        self.write_offset = write_offset;
    }

    /// Open found the active segment's header promising `write_margin_bytes`.
    pub(super) fn found_write_margin(&mut self, write_margin_bytes: u64) {
        self.write_margin_bytes = write_margin_bytes;
    }

    /// Open found (or left, after cutting a torn end) the active segment `allocated_end` long.
    pub(super) fn found_file_length(&mut self, allocated_end: u64) {
        self.allocated_end = allocated_end;
    }

    /// A compaction replaced the active segment: its records end at `write_offset`, the file at
    /// `allocated_end`.
    pub(super) fn rewritten(&mut self, write_offset: u64, allocated_end: u64) {
        self.write_offset = write_offset;
        self.allocated_end = allocated_end;
    }

    /// A batch ending at `sequence` and `chain` was appended durably.
    pub(super) fn commit(&mut self, sequence: u64, chain: Hash) {
        self.sequence = sequence;
        self.chain = chain;
    }

    /// Writes `bytes` at the end of the active segment `file` and syncs; poisons on failure.
    /// In a segment with a write margin, the file grows first, in a synced step of its own (see
    /// `keep_write_margin`); in one without, a write that would pass the zeros written ahead
    /// carries `preallocate_bytes` of new zeros with it. Either way the file grows (and a sync
    /// flushes its size) only once per stretch. `path` names the file in an error.
    pub(super) fn append_durably<F: StorageFile>(
        &mut self,
        file: &mut F,
        bytes: &[u8],
        preallocate_bytes: u64,
        path: impl Fn() -> alloc::string::String,
    ) -> Result<(), Error> {
        let offset = self.write_offset;
        let end = offset + bytes.len() as u64;
        if self.write_margin_bytes > 0 {
            self.keep_write_margin(file, end, preallocate_bytes, &path)?;
        }
        let ahead = if self.write_margin_bytes > 0 { 0 } else { bounded_bytes_usize(preallocate_bytes)? };
        let extended;
        let written = if end > self.allocated_end && ahead > 0 {
            let mut with_zeros = Vec::with_capacity(bytes.len() + ahead);
            with_zeros.extend_from_slice(bytes);
            with_zeros.resize(bytes.len() + ahead, 0);
            extended = with_zeros;
            &extended[..]
        } else {
            bytes
        };
        // The mutant acknowledges what only the page cache holds.
        let sync = |file: &mut F| if mutant!(SkipSyncBeforeAcknowledge) { Ok(()) } else { file.sync() };
        if let Err(error) = file.write_at(offset, written).and_then(|()| sync(file)) {
            self.poison(PoisonCause::FailedDurableWrite);
            // Some of the bytes may be on the disk already: the caller cannot know whether the
            // write was stored, and must not take this for a refusal.
            return Err(outcome_unknown(io_error(StorageOperation::Writing, &path(), error)));
        }
        self.write_offset = end;
        self.allocated_end = self.allocated_end.max(offset + written.len() as u64);
        Ok(())
    }

    /// Keeps the active segment's promise before a write that ends at `end`: if the zeros after
    /// it would be fewer than the margin, the file first grows by a stretch of zeros, synced, so
    /// that its durable end never comes within the margin of a write, torn or not. A failure
    /// here is a refusal: the records were not written yet.
    fn keep_write_margin<F: StorageFile>(
        &mut self,
        file: &mut F,
        end: u64,
        preallocate_bytes: u64,
        path: &impl Fn() -> alloc::string::String,
    ) -> Result<(), Error> {
        let margin = self.write_margin_bytes;
        if end.saturating_add(margin) <= self.allocated_end {
            return Ok(());
        }
        let grown_end = end.saturating_add(margin).saturating_add(preallocate_bytes);
        let zeros = vec![0u8; usize::try_from(grown_end - self.allocated_end).unwrap_or(0)];
        if let Err(error) = file.write_at(self.allocated_end, &zeros).and_then(|()| file.sync()) {
            self.poison(PoisonCause::FailedDurableWrite);
            return Err(io_error(StorageOperation::Growing, &path(), error));
        }
        self.allocated_end = grown_end;
        Ok(())
    }

    /// Cuts the zeros written ahead off the segment `file` that was just sealed: it is never
    /// written again, so they would only waste space.
    pub(super) fn trim_sealed<F: StorageFile>(&mut self, file: &mut F, path: &str) -> Result<(), Error> {
        let length = self.write_offset;
        if let Err(error) = file.set_len(length).and_then(|()| file.sync()) {
            self.poison(PoisonCause::FailedRoll);
            return Err(io_error(StorageOperation::Trimming, path, error));
        }
        self.allocated_end = length;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::{ActiveLog, PoisonCause};
    use crate::codec::segment_header::SEGMENT_HEADER_BYTES;
    use crate::engine::StorageMisbehaved;
    use crate::error::Error;
    use crate::error_facts::StorageOperation;
    use crate::storage::StorageFile;

    /// A file in memory whose writes, syncs or length changes fail when asked to.
    #[derive(Default)]
    struct FlakyFile {
        bytes: Vec<u8>,
        fail_write: bool,
        fail_sync: bool,
        fail_set_len: bool,
    }

    impl StorageFile for FlakyFile {
        type Error = StorageMisbehaved;

        fn len(&self) -> Result<u64, StorageMisbehaved> {
            Ok(self.bytes.len() as u64)
        }

        fn read_at(&self, _offset: u64, _out: &mut [u8]) -> Result<(), StorageMisbehaved> {
            Err(StorageMisbehaved("not read in these tests"))
        }

        fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), StorageMisbehaved> {
            if self.fail_write {
                return Err(StorageMisbehaved("write refused"));
            }
            let start = usize::try_from(offset).unwrap();
            if self.bytes.len() < start + bytes.len() {
                self.bytes.resize(start + bytes.len(), 0);
            }
            self.bytes[start..start + bytes.len()].copy_from_slice(bytes);
            Ok(())
        }

        fn sync(&mut self) -> Result<(), StorageMisbehaved> {
            if self.fail_sync {
                return Err(StorageMisbehaved("sync refused"));
            }
            Ok(())
        }

        fn set_len(&mut self, length: u64) -> Result<(), StorageMisbehaved> {
            if self.fail_set_len {
                return Err(StorageMisbehaved("length change refused"));
            }
            self.bytes.resize(usize::try_from(length).unwrap(), 0);
            Ok(())
        }
    }

    fn path() -> String {
        String::from("agent/segment")
    }

    /// A log ready for writes in a fresh segment promising `write_margin_bytes`.
    fn ready_log(write_margin_bytes: u64) -> ActiveLog {
        let mut log = ActiveLog::new([0u8; 32]);
        log.start_segment(write_margin_bytes);
        log.open_for_writes();
        log
    }

    #[test]
    fn a_new_log_refuses_writes_until_open_has_finished() {
        let mut log = ActiveLog::new([0u8; 32]);
        assert!(log.is_poisoned());
        assert_eq!(log.poison, Some(PoisonCause::NotOpenYet));
        log.open_for_writes();
        assert!(!log.is_poisoned());
    }

    #[test]
    fn a_failed_sync_poisons_and_leaves_the_outcome_unknown() {
        let mut log = ready_log(0);
        let mut file = FlakyFile { fail_sync: true, ..FlakyFile::default() };
        let result = log.append_durably(&mut file, b"record", 64, path);
        assert!(matches!(result, Err(Error::OutcomeUnknown { .. })), "{result:?}");
        assert_eq!(log.poison, Some(PoisonCause::FailedDurableWrite));
        assert_eq!(log.write_offset(), SEGMENT_HEADER_BYTES as u64, "the tail does not move");
    }

    #[test]
    fn a_failed_growth_of_the_margin_poisons_and_is_a_refusal() {
        let mut log = ready_log(32);
        let mut file = FlakyFile { fail_write: true, ..FlakyFile::default() };
        let result = log.append_durably(&mut file, &[7u8; 100], 64, path);
        assert!(matches!(result, Err(Error::Io { operation: StorageOperation::Growing, .. })), "{result:?}");
        assert_eq!(log.poison, Some(PoisonCause::FailedDurableWrite));
        assert_eq!(log.write_offset(), SEGMENT_HEADER_BYTES as u64, "the tail does not move");
    }

    #[test]
    fn a_durable_append_keeps_the_margin_of_zeros_after_its_end() {
        let mut log = ready_log(32);
        let mut file = FlakyFile::default();
        // Nothing more written ahead than the margin itself: the file ends exactly there.
        log.append_durably(&mut file, &[7u8; 100], 0, path).unwrap();
        let end = SEGMENT_HEADER_BYTES as u64 + 100;
        assert_eq!(log.write_offset(), end);
        assert_eq!(file.len().unwrap(), end + 32, "the file ends 32 bytes of zeros after the write");
        assert!(!log.is_poisoned());
    }

    #[test]
    fn a_failed_trim_of_a_sealed_segment_poisons() {
        let mut log = ready_log(0);
        let mut file = FlakyFile { fail_set_len: true, ..FlakyFile::default() };
        assert!(log.trim_sealed(&mut file, "agent/segment").is_err());
        assert_eq!(log.poison, Some(PoisonCause::FailedRoll));
    }

    #[test]
    fn only_opening_clears_a_poison() {
        let mut log = ready_log(0);
        log.poison(PoisonCause::CompactionFailed);
        log.commit(5, [0u8; 32]);
        assert!(log.is_poisoned(), "a commit does not clear it");
        log.rewritten(SEGMENT_HEADER_BYTES as u64, SEGMENT_HEADER_BYTES as u64);
        assert!(log.is_poisoned(), "a rewrite does not clear it");
        log.start_segment(0);
        assert!(log.is_poisoned(), "a new segment does not clear it");
        log.open_for_writes();
        assert!(!log.is_poisoned());
    }
}
