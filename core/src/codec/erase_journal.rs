//! The erase journal: the overwrites an erasure in place is about to make, written durably
//! before the first of them, so that a crash in the middle of them is finished at open.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (4 = erase journal)
//!     10     2  reserved, zero
//!     12     4  overwrite count
//!     16     8  agent number
//!     24     …  overwrites, each: segment u64 | offset u64 | literal length u32 |
//!               zero length u32 | literal bytes
//!    end-4   4  crc32c of every byte before it
//! ```
//!
//! An overwrite puts its literal bytes at `offset` of the segment, then as many zeros as its
//! zero length says. The zeros are where erased text was: they are counted, never stored, and
//! the literal bytes are only records up to their content (frame, id, label or legs, digest)
//! and commit markers, so the journal never holds a byte of the text being erased.

use alloc::vec::Vec;

use super::bytes::{Reader, Writer};
use super::record::RECORD_MAX_BYTES;
use super::segment_header::{FORMAT_VERSION, MAGIC};
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;

/// The file kind byte of an erase journal.
pub const FILE_KIND_ERASE_JOURNAL: u8 = 4;
/// Bytes of the journal header, before the overwrites.
pub const JOURNAL_HEADER_BYTES: usize = 24;
/// Bytes of an overwrite before its literal bytes.
pub const OVERWRITE_HEADER_BYTES: usize = 24;
/// Bytes of the checksum that ends the journal.
const CHECKSUM_BYTES: usize = 4;

const _: () = assert!(JOURNAL_HEADER_BYTES == 8 + 1 + 1 + 2 + 4 + 8);
const _: () = assert!(OVERWRITE_HEADER_BYTES == 8 + 8 + 4 + 4);

/// One stretch of a segment to overwrite: `literal`, then `zeros` zero bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overwrite {
    /// The segment number.
    pub segment: u64,
    /// Where the stretch starts in the segment file.
    pub offset: u64,
    /// Bytes written first (a record up to its content, or a commit marker); never erased text.
    pub literal: Vec<u8>,
    /// Zero bytes written right after the literal ones (where erased text was).
    pub zeros: u32,
}

impl Overwrite {
    /// The offset just after the stretch.
    #[must_use]
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.literal.len() as u64)?.checked_add(u64::from(self.zeros))
    }

    /// The bytes the stretch receives, literal and zeros.
    #[must_use]
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.literal.len() + self.zeros as usize);
        bytes.extend_from_slice(&self.literal);
        bytes.resize(self.literal.len() + self.zeros as usize, 0);
        bytes
    }
}

/// A decoded erase journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraseJournal {
    /// The agent whose segments it overwrites.
    pub agent: u64,
    /// The overwrites, in the order they are applied.
    pub overwrites: Vec<Overwrite>,
}

impl EraseJournal {
    /// The journal's bytes.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let literal_bytes: usize = self.overwrites.iter().map(|overwrite| overwrite.literal.len()).sum();
        let mut out = Vec::with_capacity(
            JOURNAL_HEADER_BYTES + self.overwrites.len() * OVERWRITE_HEADER_BYTES + literal_bytes + CHECKSUM_BYTES,
        );
        out.put_bytes(&MAGIC);
        out.put_u8(FORMAT_VERSION);
        out.put_u8(FILE_KIND_ERASE_JOURNAL);
        out.put_u16(0);
        out.put_u32(crate::convert::field_length_u32(self.overwrites.len()));
        out.put_u64(self.agent);
        for overwrite in &self.overwrites {
            debug_assert!(overwrite.literal.len() <= RECORD_MAX_BYTES && overwrite.zeros as usize <= RECORD_MAX_BYTES);
            out.put_u64(overwrite.segment);
            out.put_u64(overwrite.offset);
            out.put_u32(crate::convert::field_length_u32(overwrite.literal.len()));
            out.put_u32(overwrite.zeros);
            out.put_bytes(&overwrite.literal);
        }
        let checksum = crc32c(&out);
        out.put_u32(checksum);
        out
    }

    /// Decodes a journal, or says which check failed. A journal that fails any check was never
    /// made durable whole (it is renamed into place only after a sync), so no overwrite began.
    pub fn decode(bytes: &[u8]) -> Result<EraseJournal, CorruptReason> {
        let missing = CorruptReason::EraseJournalCutShort;
        let checked_length = bytes.len().checked_sub(CHECKSUM_BYTES).ok_or(missing)?;
        let (checked, stored) = bytes.split_at(checked_length);
        let mut reader = Reader::new(checked);
        if reader.array::<8>() != Some(MAGIC) {
            return Err(CorruptReason::BadMagic);
        }
        if Reader::new(stored).u32() != Some(crc32c(checked)) {
            return Err(CorruptReason::EraseJournalChecksumMismatch);
        }
        if reader.u8() != Some(FORMAT_VERSION) || reader.u8() != Some(FILE_KIND_ERASE_JOURNAL) {
            return Err(CorruptReason::EraseJournalOfAnotherFormatVersion);
        }
        if reader.u16() != Some(0) {
            return Err(CorruptReason::ReservedEraseJournalBytesSet);
        }
        let count = reader.u32().ok_or(missing)?;
        let agent = reader.u64().ok_or(missing)?;
        // The count comes from the file: allocate only what the bytes can hold.
        let mut overwrites = Vec::with_capacity((count as usize).min(reader.remaining() / OVERWRITE_HEADER_BYTES));
        for _ in 0..count {
            overwrites.push(decode_overwrite(&mut reader)?);
        }
        if reader.remaining() != 0 {
            return Err(CorruptReason::BytesLeftOverAfterEraseJournal);
        }
        Ok(EraseJournal { agent, overwrites })
    }
}

fn decode_overwrite(reader: &mut Reader<'_>) -> Result<Overwrite, CorruptReason> {
    let missing = CorruptReason::EraseJournalOverwriteCutShort;
    let segment = reader.u64().ok_or(missing)?;
    let offset = reader.u64().ok_or(missing)?;
    let literal_length = reader.u32().ok_or(missing)? as usize;
    let zeros = reader.u32().ok_or(missing)?;
    if literal_length > RECORD_MAX_BYTES || zeros as usize > RECORD_MAX_BYTES {
        return Err(CorruptReason::EraseJournalOverwriteLargerThanRecord);
    }
    let literal = reader.take(literal_length).ok_or(missing)?.to_vec();
    let overwrite = Overwrite { segment, offset, literal, zeros };
    overwrite.end().ok_or(CorruptReason::EraseJournalOverwritePastLargestOffset)?;
    Ok(overwrite)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    fn journal() -> EraseJournal {
        EraseJournal {
            agent: 1,
            overwrites: vec![
                Overwrite { segment: 2, offset: 300, literal: vec![0xaa, 0xbb], zeros: 0 },
                Overwrite { segment: 2, offset: 400, literal: vec![], zeros: 20 },
            ],
        }
    }

    #[test]
    fn golden_bytes() {
        let bytes = journal().encode();
        let expected_body: [u8; 74] = [
            b'C', b'H', b'E', b'E', b'S', b'E', b'D', b'B', // magic
            1, 4, 0, 0, // version, kind erase journal, reserved
            2, 0, 0, 0, // overwrite count
            1, 0, 0, 0, 0, 0, 0, 0, // agent
            2, 0, 0, 0, 0, 0, 0, 0, // segment
            44, 1, 0, 0, 0, 0, 0, 0, // offset 300
            2, 0, 0, 0, // literal length
            0, 0, 0, 0, // zero length
            0xaa, 0xbb, // literal
            2, 0, 0, 0, 0, 0, 0, 0, // segment
            144, 1, 0, 0, 0, 0, 0, 0, // offset 400
            0, 0, 0, 0, // literal length
            20, 0, 0, 0, // zero length: counted, not stored
        ];
        assert_eq!(bytes.get(..74), Some(&expected_body[..]));
        assert_eq!(bytes.get(74..), Some(&crc32c(&expected_body).to_le_bytes()[..]));
        assert_eq!(EraseJournal::decode(&bytes), Ok(journal()));
        assert_eq!(journal().overwrites[1].bytes(), vec![0u8; 20]);
        assert_eq!(journal().overwrites[1].end(), Some(420));
    }

    #[test]
    fn every_flipped_byte_and_every_cut_is_refused() {
        let bytes = journal().encode();
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[index] ^= 0x20;
            assert!(EraseJournal::decode(&damaged).is_err(), "flip at {index} passed");
        }
        for length in 0..bytes.len() {
            assert!(EraseJournal::decode(&bytes[..length]).is_err(), "cut at {length} passed");
        }
    }

    #[test]
    fn an_overwrite_past_the_largest_offset_is_refused() {
        let journal = EraseJournal {
            agent: 1,
            overwrites: vec![Overwrite { segment: 1, offset: u64::MAX, literal: vec![], zeros: 1 }],
        };
        assert_eq!(EraseJournal::decode(&journal.encode()), Err(CorruptReason::EraseJournalOverwritePastLargestOffset));
    }

    fn arbitrary_overwrite() -> impl Strategy<Value = Overwrite> {
        (any::<u64>(), 0u64..1 << 40, prop::collection::vec(any::<u8>(), 0..100), 0u32..5000)
            .prop_map(|(segment, offset, literal, zeros)| Overwrite { segment, offset, literal, zeros })
    }

    proptest! {
        #[test]
        fn decode_of_encode_is_identity(agent: u64, overwrites in prop::collection::vec(arbitrary_overwrite(), 0..20)) {
            let journal = EraseJournal { agent, overwrites };
            prop_assert_eq!(EraseJournal::decode(&journal.encode()), Ok(journal));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = EraseJournal::decode(&bytes);
        }

        #[test]
        fn any_valid_checksum_over_garbage_never_panics(body in prop::collection::vec(any::<u8>(), 0..300), count: u32) {
            // A forged journal with a correct checksum and a huge count: refused or decoded,
            // without panicking or allocating for the claimed count.
            let mut bytes = journal().encode();
            bytes.truncate(JOURNAL_HEADER_BYTES);
            bytes[12..16].copy_from_slice(&count.to_le_bytes());
            bytes.extend_from_slice(&body);
            let checksum = crc32c(&bytes);
            bytes.put_u32(checksum);
            let _ = EraseJournal::decode(&bytes);
        }
    }
}
