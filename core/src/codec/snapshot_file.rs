//! A snapshot: the recall graph of an agent at one committed point of its log, so that open
//! loads it and replays only the records after that point. It holds ids, flags, record
//! locations and legs, never content.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (3 = snapshot)
//!     10     2  reserved, zero
//!     12     4  reserved, zero
//!     16     8  agent number
//!     24     8  segment of the point
//!     32     8  offset of the point in that segment (a commit boundary)
//!     40     8  sequence at the point
//!     48    32  chain hash at the point
//!     80     8  node count
//!     88     8  leg word count
//!     96     4  crc32c of the body
//!    100     4  crc32c of bytes [0, 100)
//!    104     …  body: node slots (u64 each), then leg words (u32 each)
//! ```

use alloc::vec::Vec;

use super::bytes::{Reader, Writer};
use super::segment_header::{FORMAT_VERSION, MAGIC};
use crate::checksum::crc32c;
use crate::digest::Hash;

/// The file kind byte of a snapshot.
pub const FILE_KIND_SNAPSHOT: u8 = 3;
/// Bytes of a snapshot header.
pub const SNAPSHOT_HEADER_BYTES: usize = 104;

/// The committed point of the log a snapshot describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotPoint {
    /// The agent.
    pub agent: u64,
    /// The segment holding the point.
    pub segment: u64,
    /// The offset just after the last commit marker the snapshot covers.
    pub offset: u64,
    /// The sequence of the last record covered.
    pub sequence: u64,
    /// The chain hash after it.
    pub chain: Hash,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Where in the log it was taken.
    pub point: SnapshotPoint,
    /// The graph's node slots.
    pub slots: Vec<u64>,
    /// The graph's packed leg words.
    pub leg_words: Vec<u32>,
}

impl SnapshotFile {
    /// The snapshot's bytes.
    pub fn encode(point: &SnapshotPoint, slots: &[u64], leg_words: &[u32]) -> Vec<u8> {
        let mut body = Vec::with_capacity(slots.len() * 8 + leg_words.len() * 4);
        for slot in slots {
            body.put_u64(*slot);
        }
        for word in leg_words {
            body.put_u32(*word);
        }
        let mut out = Vec::with_capacity(SNAPSHOT_HEADER_BYTES + body.len());
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_SNAPSHOT);
        out.put_u16(0);
        out.put_u32(0);
        out.put_u64(point.agent);
        out.put_u64(point.segment);
        out.put_u64(point.offset);
        out.put_u64(point.sequence);
        out.put_bytes(&point.chain);
        out.put_u64(slots.len() as u64);
        out.put_u64(leg_words.len() as u64);
        out.put_u32(crc32c(&body));
        let header_checksum = crc32c(&out);
        out.put_u32(header_checksum);
        debug_assert_eq!(out.len(), SNAPSHOT_HEADER_BYTES);
        out.extend_from_slice(&body);
        out
    }

    /// Decodes a snapshot, or says which check failed.
    pub fn decode(bytes: &[u8]) -> Result<SnapshotFile, &'static str> {
        let missing = "snapshot cut short";
        let header = bytes.get(..SNAPSHOT_HEADER_BYTES).ok_or(missing)?;
        let checked = header.get(..SNAPSHOT_HEADER_BYTES - 4).ok_or(missing)?;
        let mut reader = Reader::new(header);
        if reader.array::<8>() != Some(MAGIC) {
            return Err("not a cheesedb file (bad magic)");
        }
        if Reader::new(header.get(SNAPSHOT_HEADER_BYTES - 4..).unwrap_or_default()).u32() != Some(crc32c(checked)) {
            return Err("snapshot header checksum mismatch");
        }
        if reader.u8() != Some(FORMAT_VERSION) || reader.u8() != Some(FILE_KIND_SNAPSHOT) {
            return Err("not a snapshot of this format version");
        }
        if reader.u16() != Some(0) || reader.u32() != Some(0) {
            return Err("reserved snapshot bytes set");
        }
        let point = SnapshotPoint {
            agent: reader.u64().ok_or(missing)?,
            segment: reader.u64().ok_or(missing)?,
            offset: reader.u64().ok_or(missing)?,
            sequence: reader.u64().ok_or(missing)?,
            chain: reader.array().ok_or(missing)?,
        };
        let slot_count = usize::try_from(reader.u64().ok_or(missing)?).map_err(|_| missing)?;
        let word_count = usize::try_from(reader.u64().ok_or(missing)?).map_err(|_| missing)?;
        let body_checksum = reader.u32().ok_or(missing)?;
        let body = bytes.get(SNAPSHOT_HEADER_BYTES..).unwrap_or_default();
        let expected_length = slot_count.checked_mul(8).and_then(|slots| slots.checked_add(word_count.checked_mul(4)?));
        if expected_length != Some(body.len()) {
            return Err("snapshot body length does not match its counts");
        }
        if crc32c(body) != body_checksum {
            return Err("snapshot body checksum mismatch");
        }
        let (slot_bytes, word_bytes) = body.split_at(slot_count * 8);
        let slots = slot_bytes.chunks_exact(8).map(|chunk| Reader::new(chunk).u64().unwrap_or_default()).collect();
        let leg_words = word_bytes.chunks_exact(4).map(|chunk| Reader::new(chunk).u32().unwrap_or_default()).collect();
        Ok(SnapshotFile { point, slots, leg_words })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn point() -> SnapshotPoint {
        SnapshotPoint { agent: 1, segment: 2, offset: 300, sequence: 9, chain: [3; 32] }
    }

    #[test]
    fn golden_header_bytes() {
        let bytes = SnapshotFile::encode(&point(), &[7], &[5, 6]);
        assert_eq!(bytes.get(..12), Some(&b"CHEESEDB\x01\x03\x00\x00"[..]));
        assert_eq!(bytes.get(80..96), Some(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0][..]));
        assert_eq!(bytes.len(), SNAPSHOT_HEADER_BYTES + 8 + 8);
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let bytes = SnapshotFile::encode(&point(), &[7, 8], &[5]);
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[index] ^= 0x04;
            assert!(SnapshotFile::decode(&damaged).is_err(), "flip at {index} passed");
        }
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(slots in prop::collection::vec(any::<u64>(), 0..20), words in prop::collection::vec(any::<u32>(), 0..20)) {
            let bytes = SnapshotFile::encode(&point(), &slots, &words);
            prop_assert_eq!(SnapshotFile::decode(&bytes), Ok(SnapshotFile { point: point(), slots, leg_words: words }));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = SnapshotFile::decode(&bytes);
        }
    }
}
