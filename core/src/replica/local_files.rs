//! Reading an agent's files for shipping: how far each segment's committed part reaches, found
//! by the same scan open uses, resumed where the last ship stopped.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;
use crate::engine::io_error;
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::log::names::{agent_folder, parse_segment_name, segment_path};
use crate::log::scan::{scan_records_after, Expected};
use crate::storage::{Storage, StorageFile};
use crate::storage_error::{StorageError, StorageErrorKind};

/// Where the committed log ends, as far as it was read: in `segment`, at `committed_end` (0
/// while the segment has not been started), after `sequence` records whose chain is `chain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The segment the log ends in.
    pub segment: u64,
    /// Where its committed part ends (0 when the segment does not exist yet).
    pub committed_end: u64,
    /// Records before that point.
    pub sequence: u64,
    /// The chain hash at that point.
    pub chain: Hash,
}

/// What advancing the cursor found: the committed end of every segment it read.
#[derive(Debug, Clone, Default)]
pub struct Advance {
    /// Segment number and the end of its committed part, in order.
    pub segments: Vec<(u64, u64)>,
}

/// Reads `length` bytes at `offset` of `path`.
pub(crate) fn read_range<S: Storage>(storage: &S, path: &str, offset: u64, length: u64) -> Result<Vec<u8>, Error> {
    let file = storage.open_file(path, false).map_err(|error| io_error(StorageOperation::Opening, path, error))?;
    let length = usize::try_from(length).map_err(|_| crate::engine::too_large_to_read(length))?;
    let mut bytes = alloc::vec![0u8; length];
    file.read_at(offset, &mut bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
    Ok(bytes)
}

/// The length of `path`, or `None` when there is no such file.
pub(crate) fn file_length<S: Storage>(storage: &S, path: &str) -> Result<Option<u64>, Error> {
    match storage.open_file(path, false) {
        Ok(file) => file.len().map(Some).map_err(|error| io_error(StorageOperation::Measuring, path, error)),
        Err(error) if error.kind() == StorageErrorKind::NotFound => Ok(None),
        Err(error) => Err(io_error(StorageOperation::Opening, path, error)),
    }
}

/// The highest segment number in the agent's folder.
pub(crate) fn last_segment<S: Storage>(storage: &S, agent: u64) -> Result<u64, Error> {
    let folder = agent_folder(agent);
    let names = storage.list(&folder).map_err(|error| io_error(StorageOperation::Listing, &folder, error))?;
    Ok(names.iter().filter_map(|name| parse_segment_name(name)).max().unwrap_or(0))
}

/// The cursor at the start of `segment`, from its header: the point every later read resumes
/// from. `None` when the segment does not exist.
pub(crate) fn cursor_at_segment_start<S: Storage>(
    storage: &S,
    agent: u64,
    segment: u64,
) -> Result<Option<Cursor>, Error> {
    let path = segment_path(&agent_folder(agent), segment);
    if file_length(storage, &path)?.is_none() {
        return Ok(None);
    }
    let header_bytes = read_range(storage, &path, 0, SEGMENT_HEADER_BYTES as u64)
        .map_err(|_| corrupt(&path, 0, CorruptReason::SegmentHeaderCutShort))?;
    let header = SegmentHeader::decode(&header_bytes).map_err(|reason| corrupt(&path, 0, reason))?;
    if header.agent != agent || header.segment != segment {
        return Err(corrupt(&path, 0, CorruptReason::SegmentHeaderBelongsElsewhere));
    }
    Ok(Some(Cursor { segment, committed_end: 0, sequence: header.sequence_before, chain: header.chain_before }))
}

/// Moves `cursor` to the end of the committed log, reading only what follows it; across seals
/// into the next segments.
pub(crate) fn advance<S: Storage>(storage: &S, agent: u64, cursor: &mut Cursor) -> Result<Advance, Error> {
    let mut advance = Advance::default();
    loop {
        let path = segment_path(&agent_folder(agent), cursor.segment);
        let Some(length) = file_length(storage, &path)? else { return Ok(advance) };
        if cursor.committed_end == 0 {
            let Some(start) = cursor_at_segment_start(storage, agent, cursor.segment)? else { return Ok(advance) };
            if (start.sequence, start.chain) != (cursor.sequence, cursor.chain) {
                return Err(corrupt(&path, 0, CorruptReason::SegmentHeaderBelongsElsewhere));
            }
            cursor.committed_end = SEGMENT_HEADER_BYTES as u64;
        }
        let from = cursor.committed_end;
        let bytes = read_range(storage, &path, from, length.saturating_sub(from))?;
        let expected =
            Expected { agent, segment: cursor.segment, sequence_before: cursor.sequence, chain_before: cursor.chain };
        let base = usize::try_from(from).map_err(|_| crate::engine::too_large_to_read(from))?;
        let end = scan_records_after(&bytes, base, &expected, base, |_, _| Ok::<(), core::convert::Infallible>(()))
            .unwrap_or_else(|never| match never {});
        cursor.committed_end = end.committed_end;
        cursor.sequence = end.sequence;
        cursor.chain = end.chain;
        advance.segments.push((cursor.segment, end.committed_end));
        match end.sealed_into {
            Some(next) => *cursor = Cursor { segment: next, committed_end: 0, ..*cursor },
            None => return Ok(advance),
        }
    }
}

/// The cursor at the end of the committed log, read from the start of the last segment.
pub(crate) fn cursor_at_end<S: Storage>(storage: &S, agent: u64) -> Result<(Cursor, Advance), Error> {
    let last = last_segment(storage, agent)?;
    let Some(mut cursor) = cursor_at_segment_start(storage, agent, last.max(1))? else {
        let path = segment_path(&agent_folder(agent), 1);
        return Err(corrupt(&path, 0, CorruptReason::SegmentFileMissing));
    };
    let advance = advance(storage, agent, &mut cursor)?;
    Ok((cursor, advance))
}

/// The end of the committed part of a segment that is no longer written to, read whole.
pub(crate) fn committed_end_of_segment<S: Storage>(storage: &S, agent: u64, segment: u64) -> Result<u64, Error> {
    let path = segment_path(&agent_folder(agent), segment);
    let Some(mut cursor) = cursor_at_segment_start(storage, agent, segment)? else {
        return Err(corrupt(&path, 0, CorruptReason::SegmentFileMissing));
    };
    let advance = advance(storage, agent, &mut cursor)?;
    Ok(advance.segments.first().map_or(0, |(_, end)| *end))
}

pub(crate) fn corrupt(path: &str, offset: u64, reason: CorruptReason) -> Error {
    Error::Corrupt { file: String::from(path), offset, reason }
}
