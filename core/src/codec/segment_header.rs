//! The header at the start of every segment file.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (1 = segment)
//!     10     2  header size in bytes (96)
//!     12     4  reserved, zero
//!     16     8  agent number
//!     24     8  segment number
//!     32     8  sequence of the last record before this segment (0 for the first)
//!     40    32  chain hash before this segment's first record
//!     72     4  write margin in bytes (0: none), see below
//!     76    16  reserved, zero
//!     92     4  crc32c of bytes [0, 92)
//! ```
//!
//! The write margin is a promise about the segment while it is active: every durable write in it
//! ends at least that many bytes before the file's durable end, so a file shorter than its last
//! commit plus the margin was cut. Older readers ignore it: it lies in bytes they never checked.

use alloc::vec::Vec;

use super::bytes::{Reader, Writer};
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;
use crate::digest::Hash;

/// The magic bytes at the start of every file cheesedb writes.
pub const MAGIC: [u8; 8] = *b"CHEESEDB";
/// The version of the on-disk format this code writes and reads.
pub const FORMAT_VERSION: u8 = 1;
/// The file kind byte of a segment.
pub const FILE_KIND_SEGMENT: u8 = 1;
/// Bytes of a segment header.
pub const SEGMENT_HEADER_BYTES: usize = 96;
const CHECKSUMMED_BYTES: usize = 92;

const _: () = assert!(CHECKSUMMED_BYTES + 4 == SEGMENT_HEADER_BYTES);

/// A decoded segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The agent the segment belongs to.
    pub agent: u64,
    /// The segment's number, from 1.
    pub segment: u64,
    /// The sequence of the last record before this segment.
    pub sequence_before: u64,
    /// The chain hash before this segment's first record.
    pub chain_before: Hash,
}

impl SegmentHeader {
    /// The header's bytes, with no write margin.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with_write_margin(0)
    }

    /// The header's bytes, promising `write_margin_bytes` of zeros after every durable write.
    #[must_use]
    pub fn encode_with_write_margin(&self, write_margin_bytes: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(SEGMENT_HEADER_BYTES);
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_SEGMENT);
        out.put_u16(crate::convert::field_length_u16(SEGMENT_HEADER_BYTES));
        out.put_u32(0);
        out.put_u64(self.agent);
        out.put_u64(self.segment);
        out.put_u64(self.sequence_before);
        out.put_bytes(&self.chain_before);
        out.put_u32(write_margin_bytes);
        out.put_bytes(&[0u8; 16]);
        let checksum = crc32c(&out);
        out.put_u32(checksum);
        debug_assert_eq!(out.len(), SEGMENT_HEADER_BYTES);
        out
    }

    /// Decodes a header, or says which check failed.
    pub fn decode(bytes: &[u8]) -> Result<SegmentHeader, CorruptReason> {
        let header = bytes.get(..SEGMENT_HEADER_BYTES).ok_or(CorruptReason::SegmentHeaderCutShort)?;
        let checked = header.get(..CHECKSUMMED_BYTES).ok_or(CorruptReason::SegmentHeaderCutShort)?;
        let mut reader = Reader::new(header);
        if reader.array::<8>() != Some(MAGIC) {
            return Err(CorruptReason::BadMagic);
        }
        let mut tail = Reader::new(header.get(CHECKSUMMED_BYTES..).unwrap_or_default());
        if tail.u32() != Some(crc32c(checked)) {
            return Err(CorruptReason::SegmentHeaderChecksumMismatch);
        }
        if reader.u8() != Some(FORMAT_VERSION) {
            return Err(CorruptReason::UnsupportedFormatVersion);
        }
        if reader.u8() != Some(FILE_KIND_SEGMENT) {
            return Err(CorruptReason::NotASegmentFile);
        }
        if reader.u16().map(usize::from) != Some(SEGMENT_HEADER_BYTES) || reader.u32() != Some(0) {
            return Err(CorruptReason::UnexpectedSegmentHeaderLayout);
        }
        let missing = CorruptReason::SegmentHeaderCutShort;
        Ok(SegmentHeader {
            agent: reader.u64().ok_or(missing)?,
            segment: reader.u64().ok_or(missing)?,
            sequence_before: reader.u64().ok_or(missing)?,
            chain_before: reader.array().ok_or(missing)?,
        })
    }
}

/// Where the write margin lies in a header.
const WRITE_MARGIN_OFFSET: usize = 72;

/// The write margin promised by a header that decoded (0 when none, or when `bytes` are short).
#[must_use]
pub fn write_margin_bytes(bytes: &[u8]) -> u64 {
    let field = bytes.get(WRITE_MARGIN_OFFSET..WRITE_MARGIN_OFFSET + 4).and_then(|field| field.try_into().ok());
    field.map_or(0, |field: [u8; 4]| u64::from(u32::from_le_bytes(field)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_write_margin_is_kept_in_bytes_older_readers_ignore() {
        let header = SegmentHeader { agent: 1, segment: 2, sequence_before: 3, chain_before: [9; 32] };
        let bytes = header.encode_with_write_margin(131_072);
        assert_eq!(bytes.get(72..76), Some(&[0, 0, 2, 0][..]));
        assert_eq!(SegmentHeader::decode(&bytes), Ok(header));
        assert_eq!(write_margin_bytes(&bytes), 131_072);
        assert_eq!(write_margin_bytes(&header.encode()), 0);
    }

    #[test]
    fn golden_bytes() {
        let header = SegmentHeader { agent: 1, segment: 2, sequence_before: 3, chain_before: [9; 32] };
        let bytes = header.encode();
        assert_eq!(bytes.get(..16), Some(&b"CHEESEDB\x01\x01\x60\x00\x00\x00\x00\x00"[..]));
        assert_eq!(bytes.get(16..24), Some(&[1, 0, 0, 0, 0, 0, 0, 0][..]));
        assert_eq!(bytes.get(40..72), Some(&[9u8; 32][..]));
        assert_eq!(SegmentHeader::decode(&bytes), Ok(header));
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let bytes = SegmentHeader { agent: 1, segment: 1, sequence_before: 0, chain_before: [0; 32] }.encode();
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            if let Some(byte) = damaged.get_mut(index) {
                *byte ^= 1;
            }
            assert!(SegmentHeader::decode(&damaged).is_err(), "flip at {index} passed");
        }
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(agent: u64, segment: u64, sequence_before: u64, chain_before: [u8; 32]) {
            let header = SegmentHeader { agent, segment, sequence_before, chain_before };
            prop_assert_eq!(SegmentHeader::decode(&header.encode()), Ok(header));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
            let _ = SegmentHeader::decode(&bytes);
        }
    }
}
