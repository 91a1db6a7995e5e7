//! The header shared by an encrypted agent's two key files, the key table and the epoch file.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "CHEESEDB"
//!      8     1  format version (1)
//!      9     1  file kind (5 = key table, 6 = epoch file)
//!     10     2  reserved, zero
//!     12     4  slot size in bytes
//!     16     8  agent number
//!     24    36  reserved, zero
//!     60     4  crc32c of bytes [0, 60)
//! ```
//!
//! Slots follow the header, fixed-size, so that each can be overwritten where it lies.

use super::bytes::{u32_at, Reader};
use super::segment_header::{FORMAT_VERSION, MAGIC};
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;

/// Bytes of the header.
pub const KEY_FILE_HEADER_BYTES: usize = 64;
/// The file kind byte of a key table.
pub const FILE_KIND_KEY_TABLE: u8 = 5;
/// The file kind byte of an epoch file.
pub const FILE_KIND_EPOCHS: u8 = 6;

const CHECKSUM_OFFSET: usize = 60;

/// The header of a key file of `kind` holding slots of `slot_bytes` for agent `agent`.
#[must_use]
pub fn encode_key_file_header(kind: u8, slot_bytes: u32, agent: u64) -> [u8; KEY_FILE_HEADER_BYTES] {
    let mut out = [0u8; KEY_FILE_HEADER_BYTES];
    let fields = MAGIC
        .into_iter()
        .chain([FORMAT_VERSION, kind, 0, 0])
        .chain(slot_bytes.to_le_bytes())
        .chain(agent.to_le_bytes());
    for (slot, byte) in out.iter_mut().zip(fields) {
        *slot = byte;
    }
    let checksum = crc32c(out.get(..CHECKSUM_OFFSET).unwrap_or_default()).to_le_bytes();
    for (slot, byte) in out.iter_mut().skip(CHECKSUM_OFFSET).zip(checksum) {
        *slot = byte;
    }
    out
}

/// Checks that `bytes` begin with the header of a key file of `kind` with `slot_bytes` slots
/// for agent `agent`.
///
/// # Errors
///
/// The reason of the first check that fails.
pub fn check_key_file_header(bytes: &[u8], kind: u8, slot_bytes: u32, agent: u64) -> Result<(), CorruptReason> {
    let header = bytes.get(..KEY_FILE_HEADER_BYTES).ok_or(CorruptReason::KeyFileCutShort)?;
    let body = header.get(..CHECKSUM_OFFSET).unwrap_or_default();
    if u32_at(header, CHECKSUM_OFFSET) != Some(crc32c(body)) {
        return Err(CorruptReason::KeyFileHeaderChecksumMismatch);
    }
    let mut reader = Reader::new(body);
    if reader.array::<8>() != Some(MAGIC) {
        return Err(CorruptReason::BadMagic);
    }
    if reader.u8() != Some(FORMAT_VERSION) {
        return Err(CorruptReason::UnsupportedFormatVersion);
    }
    let matches = reader.u8() == Some(kind)
        && reader.u16() == Some(0)
        && reader.u32() == Some(slot_bytes)
        && reader.u64() == Some(agent);
    if !matches {
        return Err(CorruptReason::KeyFileHeaderMismatch);
    }
    if reader.rest().iter().any(|byte| *byte != 0) {
        return Err(CorruptReason::ReservedBitsSet);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_bytes_of_a_key_table_header() {
        let header = encode_key_file_header(FILE_KIND_KEY_TABLE, 80, 3);
        assert_eq!(&header[..24], b"CHEESEDB\x01\x05\x00\x00\x50\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00");
        assert!(header[24..60].iter().all(|byte| *byte == 0));
        assert_eq!(header[60..], crc32c(&header[..60]).to_le_bytes());
        assert_eq!(check_key_file_header(&header, FILE_KIND_KEY_TABLE, 80, 3), Ok(()));
    }

    #[test]
    fn a_header_of_another_kind_agent_or_size_or_with_a_flipped_bit_is_refused() {
        let header = encode_key_file_header(FILE_KIND_EPOCHS, 88, 3);
        let mismatch = Err(CorruptReason::KeyFileHeaderMismatch);
        assert_eq!(check_key_file_header(&header, FILE_KIND_KEY_TABLE, 88, 3), mismatch);
        assert_eq!(check_key_file_header(&header, FILE_KIND_EPOCHS, 80, 3), mismatch);
        assert_eq!(check_key_file_header(&header, FILE_KIND_EPOCHS, 88, 4), mismatch);
        assert_eq!(check_key_file_header(&header[..63], FILE_KIND_EPOCHS, 88, 3), Err(CorruptReason::KeyFileCutShort));
        for index in 0..KEY_FILE_HEADER_BYTES {
            let mut flipped = header;
            flipped[index] ^= 4;
            assert!(check_key_file_header(&flipped, FILE_KIND_EPOCHS, 88, 3).is_err(), "byte {index}");
        }
    }
}
