//! The key table of an encrypted agent (`agent-…/keys`): after the key file header, one slot per
//! lot or memory, by id, holding the node's secret wrapped under the agent's slot key.
//!
//! ```text
//! slot of id n, at 64 + (n - 1) × 80
//! offset  size  field
//!      0    24  nonce
//!     24    48  node secret sealed under the slot key (32 bytes, then the 16-byte tag)
//!     72     4  crc32c of agent number u64 ‖ id u64 ‖ bytes [0, 72)
//!     76     4  reserved, zero
//! ```
//!
//! A slot of 80 zeros holds no key: an Erase destroyed it, where it lies, or it was never
//! written. The crc lets a check without the token find a damaged slot; it binds the slot to its
//! agent and id, so a slot copied elsewhere fails, and says nothing of the secret.

use super::bytes::u32_at;
use super::key_file_header::KEY_FILE_HEADER_BYTES;
use crate::checksum::crc32c;
use crate::corrupt_reason::CorruptReason;

/// Bytes of one slot.
pub const KEY_SLOT_BYTES: usize = 80;

/// Bytes of a nonce, and of a 256-bit key sealed with its tag, as `seal` makes them.
const NONCE_BYTES: usize = 24;
type Nonce = [u8; NONCE_BYTES];
type WrappedKey = [u8; 48];

const CHECKED_BYTES: usize = 72;
const _: () = assert!(NONCE_BYTES + 48 == CHECKED_BYTES);

/// A node secret as its slot holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySlot {
    /// The nonce it was sealed with.
    pub nonce: Nonce,
    /// The secret sealed under the slot key.
    pub wrapped: WrappedKey,
}

/// Where the slot of `id` starts in the key table, if ids start at 1 and it fits a `u64`.
#[must_use]
pub fn key_slot_offset(id: u64) -> Option<u64> {
    let index = id.checked_sub(1)?;
    index.checked_mul(KEY_SLOT_BYTES as u64)?.checked_add(KEY_FILE_HEADER_BYTES as u64)
}

/// The bytes of `slot` as the slot of node `id` of agent `agent`.
#[must_use]
pub fn encode_key_slot(agent: u64, id: u64, slot: &KeySlot) -> [u8; KEY_SLOT_BYTES] {
    let mut out = [0u8; KEY_SLOT_BYTES];
    for (place, byte) in out.iter_mut().zip(slot.nonce.iter().chain(slot.wrapped.iter())) {
        *place = *byte;
    }
    let checksum = slot_checksum(agent, id, out.get(..CHECKED_BYTES).unwrap_or_default());
    for (place, byte) in out.iter_mut().skip(CHECKED_BYTES).zip(checksum.to_le_bytes()) {
        *place = byte;
    }
    out
}

/// The slot of node `id` of agent `agent`: `None` when it holds no key.
///
/// # Errors
///
/// `KeyFileCutShort` for fewer than 80 bytes, `KeySlotChecksumMismatch` for a slot whose crc
/// fails (damaged, torn, or copied from another place), `ReservedBitsSet`.
pub fn decode_key_slot(agent: u64, id: u64, bytes: &[u8]) -> Result<Option<KeySlot>, CorruptReason> {
    let bytes = bytes.get(..KEY_SLOT_BYTES).ok_or(CorruptReason::KeyFileCutShort)?;
    if bytes.iter().all(|byte| *byte == 0) {
        return Ok(None);
    }
    let checked = bytes.get(..CHECKED_BYTES).unwrap_or_default();
    if u32_at(bytes, CHECKED_BYTES) != Some(slot_checksum(agent, id, checked)) {
        return Err(CorruptReason::KeySlotChecksumMismatch);
    }
    if u32_at(bytes, CHECKED_BYTES + 4) != Some(0) {
        return Err(CorruptReason::ReservedBitsSet);
    }
    let (nonce, wrapped) = checked.split_at(NONCE_BYTES);
    let nonce = nonce.try_into().map_err(|_| CorruptReason::KeyFileCutShort)?;
    let wrapped = wrapped.try_into().map_err(|_| CorruptReason::KeyFileCutShort)?;
    Ok(Some(KeySlot { nonce, wrapped }))
}

fn slot_checksum(agent: u64, id: u64, checked: &[u8]) -> u32 {
    let mut bytes = [0u8; 16 + CHECKED_BYTES];
    let fields = agent.to_le_bytes().into_iter().chain(id.to_le_bytes()).chain(checked.iter().copied());
    for (place, byte) in bytes.iter_mut().zip(fields) {
        *place = byte;
    }
    crc32c(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn slot() -> KeySlot {
        KeySlot { nonce: [1; 24], wrapped: [2; 48] }
    }

    #[test]
    fn golden_bytes_of_a_slot() {
        let bytes = encode_key_slot(1, 2, &slot());
        assert_eq!(&bytes[..24], &[1; 24]);
        assert_eq!(&bytes[24..72], &[2; 48]);
        let mut checked = [0u8; 88];
        checked[..8].copy_from_slice(&1u64.to_le_bytes());
        checked[8..16].copy_from_slice(&2u64.to_le_bytes());
        checked[16..].copy_from_slice(&bytes[..72]);
        assert_eq!(bytes[72..76], crc32c(&checked).to_le_bytes());
        assert_eq!(bytes[76..], [0; 4]);
        assert_eq!(key_slot_offset(1), Some(64));
        assert_eq!(key_slot_offset(3), Some(224));
        assert_eq!(key_slot_offset(0), None);
        assert_eq!(key_slot_offset(u64::MAX), None);
    }

    #[test]
    fn zeros_hold_no_key_and_a_slot_moved_to_another_id_or_agent_is_refused() {
        assert_eq!(decode_key_slot(1, 2, &[0; 80]), Ok(None));
        let bytes = encode_key_slot(1, 2, &slot());
        assert_eq!(decode_key_slot(1, 2, &bytes), Ok(Some(slot())));
        assert_eq!(decode_key_slot(1, 3, &bytes), Err(CorruptReason::KeySlotChecksumMismatch));
        assert_eq!(decode_key_slot(2, 2, &bytes), Err(CorruptReason::KeySlotChecksumMismatch));
        assert_eq!(decode_key_slot(1, 2, &bytes[..79]), Err(CorruptReason::KeyFileCutShort));
    }

    proptest! {
        #[test]
        fn slots_round_trip_and_any_flipped_bit_is_found(
            agent: u64, id: u64, nonce: [u8; 24], wrapped in proptest::array::uniform32(any::<u8>()), bit in 0usize..640
        ) {
            let mut full = [0u8; 48];
            full[..32].copy_from_slice(&wrapped);
            let slot = KeySlot { nonce, wrapped: full };
            let mut bytes = encode_key_slot(agent, id, &slot);
            prop_assert_eq!(decode_key_slot(agent, id, &bytes), Ok(Some(slot)));
            bytes[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(decode_key_slot(agent, id, &bytes) != Ok(Some(slot)));
        }
    }
}
