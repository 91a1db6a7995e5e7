//! An oracle for the commit markers, independent of the engine's scanner: after `verify` has
//! passed, every commit marker in the agent's segments must close exactly the bytes of its batch
//! (its batch start and its batch checksum). A verify that ignored the batch checksum would let
//! records that each check, but were never committed together, pass as history.

use cheesedb_core::checksum::crc32c;
use cheesedb_core::codec::record::{self, Body};
use cheesedb_core::codec::segment_header::SEGMENT_HEADER_BYTES;

use crate::storage::SimStorage;

/// The first commit marker, in the segments at `paths`, that does not match its batch: its file
/// and offset. The walk of a segment ends at the first bytes that are not a record.
pub fn first_mismatched_marker(storage: &SimStorage, paths: &[String]) -> Option<(String, u64)> {
    for path in paths {
        let bytes = storage.file_bytes(path).unwrap_or_default();
        let mut position = SEGMENT_HEADER_BYTES;
        let mut batch_start = position;
        while let Some(rest) = bytes.get(position..).filter(|rest| !rest.is_empty()) {
            let Ok((found, length)) = record::decode(rest) else { break };
            if let Body::Commit { batch_start: claimed, batch_crc, .. } = found.body {
                let batch = bytes.get(batch_start..position).unwrap_or_default();
                if claimed != batch_start as u64 || crc32c(batch) != batch_crc {
                    return Some((path.clone(), position as u64));
                }
                batch_start = position + length;
            }
            position += length;
        }
    }
    None
}
