//! Encryption at rest for encrypted agents.
//!
//! The keys, from the top:
//!
//! - The **token** (shown once, never stored) yields two wrapping keys by SHA-256 under their own
//!   domains: the *slot key* and the *epoch wrapping key* ([`AgentSecrets`]). The catalog keeps
//!   a hash of the token under a third domain, from which neither can be computed.
//! - Each lot and memory has a random 256-bit **node secret**. Its content (for a lot, the label
//!   too) and every vector attached to it are sealed under it with XChaCha20-Poly1305, the
//!   record's identity (agent, id, sequence, kind) bound as associated data.
//! - The node secret lives in the agent's **key table**, one slot per id, wrapped under the slot
//!   key. An Erase overwrites the slots of the erased nodes with zeros where they lie.
//! - The record also carries its node secret wrapped under the **epoch key** in force when it was
//!   written, so that a crash before the key table reached the disk loses nothing. Epoch keys are
//!   random, kept in the agent's epoch file wrapped under the epoch wrapping key, and every Erase
//!   starts a new epoch and destroys the older ones: old copies of segments then hold secrets
//!   under keys that no longer exist anywhere.
//!
//! docs/FORMAT.md has the byte layouts and the crash argument; docs/THREAT_MODEL.md what this
//! protects and what it cannot.

mod aead;
mod agent_secrets;
pub mod envelope;
mod opener;

pub use aead::{open_in_place, seal_in_place, NotAuthentic, KEY_BYTES, NONCE_BYTES, TAG_BYTES};
pub use agent_secrets::AgentSecrets;
pub use opener::{kind_byte, open_sealed, secret_in_slot, ContentOpener};

// The key files' codecs (which `seal` reads, so they cannot read `seal`) spell these sizes out.
const _: () = assert!(NONCE_BYTES == 24 && KEY_BYTES + TAG_BYTES == 48);

/// A 256-bit secret key.
pub type SecretKey = [u8; KEY_BYTES];
/// An XChaCha20 nonce: 192 bits, drawn at random for every sealing.
pub type Nonce = [u8; NONCE_BYTES];
/// A 256-bit key sealed under another: its bytes, then the Poly1305 tag.
pub type WrappedKey = [u8; KEY_BYTES + TAG_BYTES];

/// Seals a 256-bit key under `wrapping` with `nonce`, `associated` naming where it belongs.
#[must_use]
pub fn wrap_key(wrapping: &SecretKey, nonce: &Nonce, associated: &[u8], key: &SecretKey) -> WrappedKey {
    let mut out = [0u8; KEY_BYTES + TAG_BYTES];
    let (bytes, tag) = out.split_at_mut(KEY_BYTES);
    bytes.copy_from_slice(key);
    tag.copy_from_slice(&seal_in_place(wrapping, nonce, associated, bytes));
    out
}

/// Opens a key sealed by [`wrap_key`].
///
/// # Errors
///
/// `NotAuthentic` when the wrapping key, nonce or associated data differ from the sealing's, or
/// a byte changed.
pub fn unwrap_key(
    wrapping: &SecretKey,
    nonce: &Nonce,
    associated: &[u8],
    wrapped: &WrappedKey,
) -> Result<SecretKey, NotAuthentic> {
    let mut key = [0u8; KEY_BYTES];
    let (bytes, tag) = wrapped.split_at(KEY_BYTES);
    key.copy_from_slice(bytes);
    let tag: &[u8; TAG_BYTES] = tag.try_into().map_err(|_| NotAuthentic)?;
    open_in_place(wrapping, nonce, associated, &mut key, tag)?;
    Ok(key)
}

/// Bytes of the associated data of a wrapped key: a domain padded to 24 bytes, three integers.
pub const KEY_ASSOCIATED_BYTES: usize = 48;

/// Associated data of a node secret in a key table slot.
#[must_use]
pub fn slot_associated_data(agent: u64, id: u64) -> [u8; KEY_ASSOCIATED_BYTES] {
    associated(b"cheesedb/slot/v1", agent, id, 0)
}

/// Associated data of a node secret sealed in its record under an epoch key.
#[must_use]
pub fn recovery_associated_data(agent: u64, id: u64, epoch: u32) -> [u8; KEY_ASSOCIATED_BYTES] {
    associated(b"cheesedb/recovery/v1", agent, id, u64::from(epoch))
}

/// Associated data of an epoch key in the epoch file.
#[must_use]
pub fn epoch_associated_data(agent: u64, epoch: u32, start_sequence: u64) -> [u8; KEY_ASSOCIATED_BYTES] {
    associated(b"cheesedb/epoch/v1", agent, u64::from(epoch), start_sequence)
}

/// Bytes of the associated data of a sealed content.
pub const CONTENT_ASSOCIATED_BYTES: usize = 49;

/// Associated data of a sealed content: the record's identity, so a sealed content moved to
/// another agent, node, place in the log or kind of record fails to open.
#[must_use]
pub fn content_associated_data(agent: u64, id: u64, sequence: u64, kind: u8) -> [u8; CONTENT_ASSOCIATED_BYTES] {
    let mut out = [0u8; CONTENT_ASSOCIATED_BYTES];
    let (head, last) = out.split_at_mut(KEY_ASSOCIATED_BYTES);
    head.copy_from_slice(&associated(b"cheesedb/sealed/v1", agent, id, sequence));
    last.copy_from_slice(&[kind]);
    out
}

/// `domain` padded with zeros to 24 bytes, then three little-endian integers.
fn associated(domain: &[u8], agent: u64, first: u64, second: u64) -> [u8; KEY_ASSOCIATED_BYTES] {
    const DOMAIN_BYTES: usize = 24;
    debug_assert!(domain.len() < DOMAIN_BYTES);
    let padded = domain.iter().copied().chain(core::iter::repeat(0)).take(DOMAIN_BYTES);
    let fields = agent.to_le_bytes().into_iter().chain(first.to_le_bytes()).chain(second.to_le_bytes());
    let mut out = [0u8; KEY_ASSOCIATED_BYTES];
    for (slot, byte) in out.iter_mut().zip(padded.chain(fields)) {
        *slot = byte;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_key_opens_only_with_its_key_nonce_and_place() {
        let (wrapping, nonce, key) = ([7u8; 32], [9u8; 24], [3u8; 32]);
        let place = slot_associated_data(1, 5);
        let wrapped = wrap_key(&wrapping, &nonce, &place, &key);
        assert_ne!(&wrapped[..32], &key[..], "the key is not stored as it is");
        assert_eq!(unwrap_key(&wrapping, &nonce, &place, &wrapped), Ok(key));
        assert_eq!(unwrap_key(&[8u8; 32], &nonce, &place, &wrapped), Err(NotAuthentic));
        assert_eq!(unwrap_key(&wrapping, &[1u8; 24], &place, &wrapped), Err(NotAuthentic));
        assert_eq!(unwrap_key(&wrapping, &nonce, &slot_associated_data(1, 6), &wrapped), Err(NotAuthentic));
        assert_eq!(unwrap_key(&wrapping, &nonce, &slot_associated_data(2, 5), &wrapped), Err(NotAuthentic));
        let mut flipped = wrapped;
        flipped[40] ^= 1;
        assert_eq!(unwrap_key(&wrapping, &nonce, &place, &flipped), Err(NotAuthentic));
    }

    #[test]
    fn associated_data_differs_for_every_field_and_purpose() {
        let base = content_associated_data(1, 2, 3, 1);
        assert_ne!(base, content_associated_data(9, 2, 3, 1));
        assert_ne!(base, content_associated_data(1, 9, 3, 1));
        assert_ne!(base, content_associated_data(1, 2, 9, 1));
        assert_ne!(base, content_associated_data(1, 2, 3, 2));
        assert_ne!(slot_associated_data(1, 2), recovery_associated_data(1, 2, 0));
        assert_ne!(recovery_associated_data(1, 2, 3), epoch_associated_data(1, 2, 3));
        assert_ne!(recovery_associated_data(1, 2, 3), recovery_associated_data(1, 2, 4));
    }
}
