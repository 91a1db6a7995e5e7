//! The epoch file of an encrypted agent (`agent-…/epochs`): after the key file header, one slot
//! per epoch, numbered from 1, holding the epoch's key wrapped under the agent's epoch wrapping
//! key. The last slot is the epoch in force; every Erase adds one and destroys the others.
//!
//! ```text
//! slot of epoch n, at 64 + (n - 1) × 88
//! offset  size  field
//!      0     8  sequence of the first record written in the epoch (the log's sequence + 1)
//!      8    24  nonce                              ┐ zeros once the epoch is destroyed
//!     32    48  epoch key sealed under the         │
//!               epoch wrapping key, then its tag   ┘
//!     80     4  crc32c of agent number u64 ‖ epoch u32 ‖ bytes [0, 80)
//!     84     4  reserved, zero
//! ```

use super::bytes::{u32_at, Reader};
use super::key_file_header::KEY_FILE_HEADER_BYTES;
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;

/// Bytes of one slot.
pub const EPOCH_SLOT_BYTES: usize = 88;

/// Bytes of a nonce, and of a 256-bit key sealed with its tag, as `seal` makes them.
const NONCE_BYTES: usize = 24;
type Nonce = [u8; NONCE_BYTES];
type WrappedKey = [u8; 48];

const CHECKED_BYTES: usize = 80;
const _: () = assert!(8 + NONCE_BYTES + 48 == CHECKED_BYTES);

/// One epoch as its slot records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochSlot {
    /// Its key is there, wrapped.
    Live {
        /// The sequence of the first record of the epoch.
        start_sequence: u64,
        /// The nonce the key was sealed with.
        nonce: Nonce,
        /// The key, sealed under the epoch wrapping key.
        wrapped: WrappedKey,
    },
    /// Its key was destroyed by an Erase.
    Destroyed {
        /// The sequence of the first record of the epoch.
        start_sequence: u64,
    },
}

impl EpochSlot {
    /// The sequence of the first record of the epoch.
    #[must_use]
    pub fn start_sequence(&self) -> u64 {
        match *self {
            EpochSlot::Live { start_sequence, .. } | EpochSlot::Destroyed { start_sequence } => start_sequence,
        }
    }
}

/// Where the slot of `epoch` starts in the epoch file (epochs start at 1).
#[must_use]
pub fn epoch_slot_offset(epoch: u32) -> Option<u64> {
    let index = u64::from(epoch.checked_sub(1)?);
    Some(index * EPOCH_SLOT_BYTES as u64 + KEY_FILE_HEADER_BYTES as u64)
}

/// The bytes of `slot` as the slot of `epoch` of agent `agent`.
#[must_use]
pub fn encode_epoch_slot(agent: u64, epoch: u32, slot: &EpochSlot) -> [u8; EPOCH_SLOT_BYTES] {
    let mut out = [0u8; EPOCH_SLOT_BYTES];
    let (start, key_bytes): (u64, [u8; NONCE_BYTES + 48]) = match slot {
        EpochSlot::Live { start_sequence, nonce, wrapped } => {
            let mut key_bytes = [0u8; NONCE_BYTES + 48];
            for (place, byte) in key_bytes.iter_mut().zip(nonce.iter().chain(wrapped.iter())) {
                *place = *byte;
            }
            (*start_sequence, key_bytes)
        }
        EpochSlot::Destroyed { start_sequence } => (*start_sequence, [0u8; NONCE_BYTES + 48]),
    };
    for (place, byte) in out.iter_mut().zip(start.to_le_bytes().into_iter().chain(key_bytes)) {
        *place = byte;
    }
    let checksum = slot_checksum(agent, epoch, out.get(..CHECKED_BYTES).unwrap_or_default());
    for (place, byte) in out.iter_mut().skip(CHECKED_BYTES).zip(checksum.to_le_bytes()) {
        *place = byte;
    }
    out
}

/// The slot of `epoch` of agent `agent`.
///
/// # Errors
///
/// `KeyFileCutShort` for fewer than 88 bytes, `EpochSlotChecksumMismatch` when its crc fails
/// (damaged, torn, or copied from another place), `ReservedBitsSet`.
pub fn decode_epoch_slot(agent: u64, epoch: u32, bytes: &[u8]) -> Result<EpochSlot, CorruptReason> {
    let bytes = bytes.get(..EPOCH_SLOT_BYTES).ok_or(CorruptReason::KeyFileCutShort)?;
    let checked = bytes.get(..CHECKED_BYTES).unwrap_or_default();
    if u32_at(bytes, CHECKED_BYTES) != Some(slot_checksum(agent, epoch, checked)) {
        return Err(CorruptReason::EpochSlotChecksumMismatch);
    }
    if u32_at(bytes, CHECKED_BYTES + 4) != Some(0) {
        return Err(CorruptReason::ReservedBitsSet);
    }
    let mut reader = Reader::new(checked);
    let start_sequence = reader.u64().ok_or(CorruptReason::KeyFileCutShort)?;
    let key_bytes = reader.rest();
    if key_bytes.iter().all(|byte| *byte == 0) {
        return Ok(EpochSlot::Destroyed { start_sequence });
    }
    let (nonce, wrapped) = key_bytes.split_at(NONCE_BYTES);
    let nonce = nonce.try_into().map_err(|_| CorruptReason::KeyFileCutShort)?;
    let wrapped = wrapped.try_into().map_err(|_| CorruptReason::KeyFileCutShort)?;
    Ok(EpochSlot::Live { start_sequence, nonce, wrapped })
}

fn slot_checksum(agent: u64, epoch: u32, checked: &[u8]) -> u32 {
    let mut bytes = [0u8; 12 + CHECKED_BYTES];
    let fields = agent.to_le_bytes().into_iter().chain(epoch.to_le_bytes()).chain(checked.iter().copied());
    for (place, byte) in bytes.iter_mut().zip(fields) {
        *place = byte;
    }
    crc32c(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_bytes_of_a_live_and_a_destroyed_slot() {
        let live = EpochSlot::Live { start_sequence: 7, nonce: [1; 24], wrapped: [2; 48] };
        let bytes = encode_epoch_slot(1, 2, &live);
        assert_eq!(&bytes[..8], &7u64.to_le_bytes());
        assert_eq!(&bytes[8..32], &[1; 24]);
        assert_eq!(&bytes[32..80], &[2; 48]);
        assert_eq!(bytes[84..], [0; 4]);
        assert_eq!(decode_epoch_slot(1, 2, &bytes), Ok(live));
        let destroyed = encode_epoch_slot(1, 2, &EpochSlot::Destroyed { start_sequence: 7 });
        assert!(destroyed[8..80].iter().all(|byte| *byte == 0));
        assert_eq!(decode_epoch_slot(1, 2, &destroyed), Ok(EpochSlot::Destroyed { start_sequence: 7 }));
        assert_eq!(epoch_slot_offset(1), Some(64));
        assert_eq!(epoch_slot_offset(2), Some(152));
        assert_eq!(epoch_slot_offset(0), None);
    }

    #[test]
    fn a_slot_of_another_epoch_or_agent_or_with_a_flipped_bit_is_refused() {
        let bytes = encode_epoch_slot(1, 2, &EpochSlot::Live { start_sequence: 7, nonce: [1; 24], wrapped: [2; 48] });
        assert_eq!(decode_epoch_slot(1, 3, &bytes), Err(CorruptReason::EpochSlotChecksumMismatch));
        assert_eq!(decode_epoch_slot(2, 2, &bytes), Err(CorruptReason::EpochSlotChecksumMismatch));
        for index in 0..EPOCH_SLOT_BYTES {
            let mut flipped = bytes;
            flipped[index] ^= 0x10;
            assert!(decode_epoch_slot(1, 2, &flipped).is_err(), "byte {index}");
        }
    }
}
