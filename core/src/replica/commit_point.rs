//! Finding a point of an agent's history (a record count) in its files: where the durable write
//! that reaches it ends, and the chain hash there. A restore cuts the log there; a follower and a
//! shipper check there that a history extends the one they hold.

use crate::codec::record::{Body, COMMIT_BYTES};
use crate::codec::segment_header::SEGMENT_HEADER_BYTES;
use crate::digest::Hash;
use crate::error::Error;
use crate::log::names::{agent_folder, segment_path};
use crate::log::scan::{scan_records_after, Expected};
use crate::storage::Storage;

use super::local_files::{cursor_at_segment_start, file_length, last_segment, read_range};

/// The end of the first durable write after which the history holds a given number of records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitPoint {
    /// The segment it lies in.
    pub segment: u64,
    /// Where that durable write ends in the segment (the header's end for an empty history).
    pub end: u64,
    /// The chain hash there.
    pub chain: Hash,
}

/// Where the agent's committed history holds exactly `records` records, or `None` when it never
/// does (it holds fewer). Reads the headers to find the segment, then that segment only.
///
/// # Errors
///
/// `Error::Corrupt` when a header it reads is damaged; `Error::Io` when the storage fails.
pub fn find_commit_point<S: Storage>(storage: &S, agent: u64, records: u64) -> Result<Option<CommitPoint>, Error> {
    let last = last_segment(storage, agent)?;
    // The segment holding the point is the last whose first record comes after it, or at it.
    let mut holding = None;
    for segment in 1..=last {
        match cursor_at_segment_start(storage, agent, segment)? {
            Some(start) if start.sequence <= records => holding = Some(start),
            _ => break,
        }
    }
    let Some(start) = holding else { return Ok(None) };
    if start.sequence == records {
        let end = SEGMENT_HEADER_BYTES as u64;
        return Ok(Some(CommitPoint { segment: start.segment, end, chain: start.chain }));
    }
    let path = segment_path(&agent_folder(agent), start.segment);
    let length = file_length(storage, &path)?.unwrap_or(0);
    let bytes = read_range(storage, &path, 0, length)?;
    let expected =
        Expected { agent, segment: start.segment, sequence_before: start.sequence, chain_before: start.chain };
    let mut found = None;
    let _ = scan_records_after(&bytes, 0, &expected, SEGMENT_HEADER_BYTES, |record, offset| {
        if let Body::Commit { chain, .. } = record.body {
            if found.is_none() && record.identity.sequence == records {
                found = Some(CommitPoint { segment: start.segment, end: offset + COMMIT_BYTES as u64, chain });
            }
        }
        Ok::<(), core::convert::Infallible>(())
    });
    Ok(found)
}
