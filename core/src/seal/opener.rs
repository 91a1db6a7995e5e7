//! Opening the sealed contents of an encrypted agent's records, given its node secrets.

use alloc::vec::Vec;

use super::envelope::{open_payload, parse_node, parse_vector};
use super::{content_associated_data, slot_associated_data, unwrap_key, SecretKey};
use crate::codec::key_table_file::{decode_key_slot, key_slot_offset};
use crate::codec::record::{Body, Record};
use crate::corrupt_reason::CorruptReason;

/// The record kind byte that sealed contents bind, as the record header holds it.
#[must_use]
pub fn kind_byte(body: &Body<'_>) -> u8 {
    match body {
        Body::Lot { .. } => 1,
        Body::Memory { .. } => 2,
        Body::Recall { .. } => 3,
        Body::Commit { .. } => 4,
        Body::Seal { .. } => 5,
        Body::Vector { .. } => 6,
        Body::Member { .. } => 7,
        Body::Shared { .. } => 8,
        Body::RecallAll { .. } => 9,
    }
}

/// The node secret a key table slot holds: `None` when the slot holds no key (an Erase
/// destroyed it).
///
/// # Errors
///
/// `KeySlotChecksumMismatch` or `ReservedBitsSet` for a damaged slot; `KeySlotDoesNotOpen` when
/// it does not open under `slot_key` (changed, or moved from another agent or id).
pub fn secret_in_slot(
    agent: u64,
    slot_key: &SecretKey,
    id: u64,
    slot: &[u8],
) -> Result<Option<SecretKey>, CorruptReason> {
    let Some(slot) = decode_key_slot(agent, id, slot)? else { return Ok(None) };
    let secret = unwrap_key(slot_key, &slot.nonce, &slot_associated_data(agent, id), &slot.wrapped)
        .map_err(|_| CorruptReason::KeySlotDoesNotOpen)?;
    Ok(Some(secret))
}

/// The plain bytes sealed in `record`'s content (`sealed` are the content bytes), under the
/// node secret `secret`: for a lot, its label and content (`envelope::split_lot_plain_bytes`).
///
/// # Errors
///
/// `SealedContentMalformed` when the bytes are no envelope, `SealedContentDoesNotOpen` when they
/// do not open with the secret and the record's identity as associated data.
pub fn open_sealed(record: &Record<'_>, id: u64, secret: &SecretKey, sealed: &[u8]) -> Result<Vec<u8>, CorruptReason> {
    let associated =
        content_associated_data(record.identity.agent, id, record.identity.sequence, kind_byte(&record.body));
    let (nonce, payload) = match record.body {
        Body::Vector { .. } => {
            let envelope = parse_vector(sealed).ok_or(CorruptReason::SealedContentMalformed)?;
            (envelope.nonce, envelope.payload)
        }
        _ => {
            let envelope = parse_node(sealed).ok_or(CorruptReason::SealedContentMalformed)?;
            (envelope.nonce, envelope.payload)
        }
    };
    open_payload(secret, nonce, &associated, payload).map_err(|_| CorruptReason::SealedContentDoesNotOpen)
}

/// Opens sealed contents from an image of the whole key table: for passes over the whole log
/// (verification, building the search index), which may run on several threads.
#[derive(Clone)]
pub struct ContentOpener {
    agent: u64,
    slot_key: SecretKey,
    key_table: Vec<u8>,
}

impl core::fmt::Debug for ContentOpener {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter.debug_struct("ContentOpener").field("agent", &self.agent).finish_non_exhaustive()
    }
}

impl PartialEq for ContentOpener {
    fn eq(&self, other: &ContentOpener) -> bool {
        self.agent == other.agent && self.key_table == other.key_table
    }
}

impl Eq for ContentOpener {}

impl ContentOpener {
    /// An opener for agent `agent` over `key_table`, the whole key table file.
    #[must_use]
    pub fn new(agent: u64, slot_key: SecretKey, key_table: Vec<u8>) -> ContentOpener {
        ContentOpener { agent, slot_key, key_table }
    }

    /// The secret of node `id`: `None` when its slot holds no key or lies past the table's end.
    ///
    /// # Errors
    ///
    /// As [`secret_in_slot`]; `KeyFileCutShort` when the table ends inside the slot (a torn
    /// write, whose rest may still hold the key), as the engine's own read of a slot says.
    pub fn secret(&self, id: u64) -> Result<Option<SecretKey>, CorruptReason> {
        let Some(start) = key_slot_offset(id).and_then(|offset| usize::try_from(offset).ok()) else {
            return Ok(None);
        };
        let Some(slot) = self.key_table.get(start..) else { return Ok(None) };
        if slot.is_empty() {
            return Ok(None);
        }
        secret_in_slot(self.agent, &self.slot_key, id, slot)
    }

    /// The plain bytes of `record`, a record of node `id` whose content bytes are `sealed`:
    /// `None` when the node's key was destroyed.
    ///
    /// # Errors
    ///
    /// As [`ContentOpener::secret`] and [`open_sealed`].
    pub fn open(&self, record: &Record<'_>, id: u64, sealed: &[u8]) -> Result<Option<Vec<u8>>, CorruptReason> {
        match self.secret(id)? {
            Some(secret) => open_sealed(record, id, &secret, sealed).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;
    use crate::codec::key_file_header::KEY_FILE_HEADER_BYTES;
    use crate::codec::key_table_file::{encode_key_slot, KeySlot, KEY_SLOT_BYTES};
    use crate::seal::wrap_key;

    const AGENT: u64 = 4;
    const SLOT_KEY: SecretKey = [7; 32];

    fn slot(id: u64, secret: &SecretKey) -> [u8; KEY_SLOT_BYTES] {
        let nonce = [u8::try_from(id).unwrap(); 24];
        let wrapped = wrap_key(&SLOT_KEY, &nonce, &slot_associated_data(AGENT, id), secret);
        encode_key_slot(AGENT, id, &KeySlot { nonce, wrapped })
    }

    #[test]
    fn a_slot_the_table_ends_inside_is_cut_short_and_one_past_its_end_holds_no_key() {
        let mut table = vec![0u8; KEY_FILE_HEADER_BYTES];
        table.extend_from_slice(&slot(1, &[1; 32]));
        table.extend_from_slice(&slot(2, &[2; 32])[..30]);
        let opener = ContentOpener::new(AGENT, SLOT_KEY, table);
        assert_eq!(opener.secret(1), Ok(Some([1; 32])));
        assert_eq!(opener.secret(2), Err(CorruptReason::KeyFileCutShort));
        assert_eq!(opener.secret(3), Ok(None));
    }
}
