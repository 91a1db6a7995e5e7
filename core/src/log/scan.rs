//! Reads one segment's bytes: checks the header, every record, the chain and every commit
//! marker, hands each committed record to a visitor, and says exactly where the committed part
//! ends and whether anything after it is damage or a torn write.

use alloc::vec::Vec;

use crate::checksum::crc32c;
use crate::codec::record::{self, Body, Record, COMMIT_BYTES};
use crate::codec::segment_header::{SegmentHeader, SEGMENT_HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::digest::{chain_next, Hash};

/// What the segment must be, from its name and the segments before it.
#[derive(Debug, Clone, Copy)]
pub struct Expected {
    /// The agent.
    pub agent: u64,
    /// The segment number.
    pub segment: u64,
    /// The last sequence before this segment.
    pub sequence_before: u64,
    /// The chain hash before this segment.
    pub chain_before: Hash,
}

/// Where a check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Offset in the file.
    pub offset: u64,
    /// Which check.
    pub reason: CorruptReason,
}

/// How the scan of a segment ended.
#[derive(Debug, Clone)]
pub struct ScanEnd {
    /// Offset just after the last valid commit marker (the header size if none).
    pub committed_end: u64,
    /// Offset just after the last byte that is not zero, and at least `committed_end`. Zeros
    /// after the committed part are space set aside for later writes, not data.
    pub data_end: u64,
    /// Chained records committed in this segment.
    pub committed_records: u64,
    /// The sequence after the committed part.
    pub sequence: u64,
    /// The chain hash after the committed part.
    pub chain: Hash,
    /// The next segment's number, when the committed part ends with a seal.
    pub sealed_into: Option<u64>,
    /// The first check that failed after the committed part, if any bytes follow it.
    pub damage: Option<Damage>,
    /// Records that decoded after the last commit marker (a torn write's, if no damage before).
    pub uncommitted_records: u64,
}

impl ScanEnd {
    /// Whether nothing but zeros follows the committed part.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.data_end == self.committed_end
    }
}

/// Whether the header is the one `expected` describes.
pub fn check_header(bytes: &[u8], expected: &Expected) -> Result<(), Damage> {
    let header = SegmentHeader::decode(bytes).map_err(|reason| Damage { offset: 0, reason })?;
    let wanted = SegmentHeader {
        agent: expected.agent,
        segment: expected.segment,
        sequence_before: expected.sequence_before,
        chain_before: expected.chain_before,
    };
    if header != wanted {
        return Err(Damage { offset: 0, reason: CorruptReason::SegmentHeaderBelongsElsewhere });
    }
    Ok(())
}

/// Scans the records from `start` (just after a checked header, or a committed point whose
/// sequence and chain `expected` gives). `visit` gets every committed record with its
/// offset, batch by batch, each batch followed by its commit marker; an error from it stops the
/// scan and is returned as it is.
pub fn scan_records<'a, E>(
    bytes: &'a [u8],
    expected: &Expected,
    start: usize,
    visit: impl FnMut(&Record<'a>, u64) -> Result<(), E>,
) -> Result<ScanEnd, E> {
    scan_records_after(bytes, 0, expected, start, visit)
}

/// Like [`scan_records`], over `bytes` that hold the file from offset `base` on (`base` at
/// most `start`): a replay that resumes at a snapshot's point reads only what follows it.
/// Offsets given to `visit` and in the result are offsets in the file.
pub fn scan_records_after<'a, E>(
    bytes: &'a [u8],
    base: usize,
    expected: &Expected,
    start: usize,
    mut visit: impl FnMut(&Record<'a>, u64) -> Result<(), E>,
) -> Result<ScanEnd, E> {
    debug_assert!(base <= start, "the scan must start inside the bytes it was given");
    let window = move |from: usize, to: usize| bytes.get(from.saturating_sub(base)..to.saturating_sub(base));
    let mut end = ScanEnd {
        committed_end: start as u64,
        data_end: start as u64,
        committed_records: 0,
        sequence: expected.sequence_before,
        chain: expected.chain_before,
        sealed_into: None,
        damage: None,
        uncommitted_records: 0,
    };
    let mut pending: Vec<(Record<'a>, u64)> = Vec::new();
    let mut sequence = end.sequence;
    let mut chain = end.chain;
    let mut fields = Vec::new();
    let mut position = start;
    let file_end = base + bytes.len();
    while position < file_end {
        let rest = window(position, file_end).unwrap_or_default();
        let damage = |reason| Some(Damage { offset: position as u64, reason });
        let (record, length) = match record::decode(rest) {
            Ok(decoded) => decoded,
            Err(error) => {
                end.damage = damage(error);
                break;
            }
        };
        if record.identity.agent != expected.agent || record.identity.segment != expected.segment {
            end.damage = damage(CorruptReason::RecordBelongsElsewhere);
            break;
        }
        if end.sealed_into.is_some() {
            end.damage = damage(CorruptReason::RecordAfterSeal);
            break;
        }
        match record.body {
            Body::Commit { batch_start, batch_crc, record_count, chain: committed_chain } => {
                let batch = usize::try_from(end.committed_end)
                    .ok()
                    .and_then(|start| window(start, position))
                    .unwrap_or_default();
                let matches = batch_start == end.committed_end
                    && !pending.is_empty()
                    && record_count as usize == pending.len()
                    && (batch_crc == crc32c(batch) || mutant!(IgnoreBatchChecksum))
                    && committed_chain == chain
                    && record.identity.sequence == sequence;
                if !matches {
                    end.damage = damage(CorruptReason::CommitMarkerDoesNotMatchBatch);
                    break;
                }
                for (committed, offset) in pending.drain(..) {
                    if let Body::Seal { next_segment } = committed.body {
                        end.sealed_into = Some(next_segment);
                    }
                    visit(&committed, offset)?;
                }
                visit(&record, position as u64)?;
                end.committed_records += sequence - end.sequence;
                end.sequence = sequence;
                end.chain = chain;
                end.committed_end = (position + length) as u64;
            }
            Body::Seal { next_segment } => {
                let alone = pending.is_empty() && next_segment == expected.segment + 1;
                if !alone || record.identity.sequence != sequence {
                    end.damage = damage(CorruptReason::SealNotAloneOrWrongSegment);
                    break;
                }
                pending.push((record, position as u64));
            }
            Body::Lot { .. }
            | Body::Memory { .. }
            | Body::Recall { .. }
            | Body::RecallAll { .. }
            | Body::Vector { .. }
            | Body::Member { .. }
            | Body::Shared { .. } => {
                if record.identity.sequence != sequence + 1 {
                    end.damage = damage(CorruptReason::RecordSequenceOutOfOrder);
                    break;
                }
                sequence += 1;
                record.encode_chained_fields(&mut fields);
                chain = chain_next(&chain, &fields);
                pending.push((record, position as u64));
            }
        }
        position += length;
    }
    end.uncommitted_records = pending.iter().filter(|(record, _)| record.is_chained()).count() as u64;
    // Only the bytes after the committed part can be data past it; the search stops there, so a
    // scan that starts late never reads what lies before its start.
    let after_commit =
        usize::try_from(end.committed_end).ok().and_then(|start| window(start, file_end)).unwrap_or_default();
    let data_after = after_commit.iter().rposition(|byte| *byte != 0).map_or(0, |last| last as u64 + 1);
    end.data_end = end.committed_end + data_after;
    if end.is_clean() {
        end.damage = None;
    }
    Ok(end)
}

/// The first offset at or after `from` where a commit marker stands that is valid in itself: its
/// checksum, its identity and the checksum of the batch it closes. Such a marker proves the bytes
/// before its batch were once durable, so damage before it cannot be a torn write.
#[must_use]
pub fn find_valid_commit(bytes: &[u8], from: u64, expected: &Expected) -> Option<u64> {
    let start = usize::try_from(from).ok()?;
    let last = bytes.len().checked_sub(COMMIT_BYTES)?;
    (start..=last)
        .find(|&position| {
            let Some(candidate) = bytes.get(position..) else { return false };
            if !record::looks_like_commit(candidate) {
                return false;
            }
            let Ok((record, _)) = record::decode(candidate) else { return false };
            let Body::Commit { batch_start, batch_crc, .. } = record.body else { return false };
            let own = record.identity.agent == expected.agent && record.identity.segment == expected.segment;
            let batch = usize::try_from(batch_start)
                .ok()
                .filter(|start| *start >= SEGMENT_HEADER_BYTES)
                .and_then(|start| bytes.get(start..position));
            own && batch.is_some_and(|batch| !batch.is_empty() && crc32c(batch) == batch_crc)
        })
        .map(|position| position as u64)
}

/// How many chained records of this segment decode whole, checksum included, between `from`
/// and `to`, found wherever they start: what a cut of that range takes with it, including the
/// records a damaged byte before them kept the scan from reaching.
pub fn count_whole_records(bytes: &[u8], from: u64, to: u64, expected: &Expected) -> u64 {
    let (Ok(mut position), Ok(end)) = (usize::try_from(from), usize::try_from(to)) else { return 0 };
    let mut count = 0;
    let range = bytes.get(..end.min(bytes.len())).unwrap_or_default();
    while position < range.len() {
        let decoded = range.get(position..).map(record::decode);
        match decoded {
            Some(Ok((record, length)))
                if record.identity.agent == expected.agent && record.identity.segment == expected.segment =>
            {
                count += u64::from(record.is_chained());
                position += length.max(1);
            }
            _ => position += 1,
        }
    }
    count
}
