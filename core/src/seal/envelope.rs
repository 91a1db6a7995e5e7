//! The content bytes of a sealed record: what a lot, memory or vector record of an encrypted
//! agent holds where a plaintext agent's record holds its text.
//!
//! ```text
//! lot or memory:  epoch u32 | nonce [24] | node secret under the epoch key [48] | payload
//! vector:                     nonce [24] |                                        payload
//! payload:        the plain bytes encrypted under the node secret, then the tag [16]
//! plain bytes:    lot: label length u16, label, content; memory: content; vector: numbers
//! ```
//!
//! One random nonce serves both sealings of a record; they are under different keys.

use alloc::vec::Vec;

use super::{seal_in_place, wrap_key, Nonce, SecretKey, WrappedKey, NONCE_BYTES, TAG_BYTES};
use crate::codec::bytes::Reader;

/// Bytes a lot's or memory's envelope adds to its plain bytes.
pub const NODE_ENVELOPE_OVERHEAD_BYTES: usize = 4 + NONCE_BYTES + 48 + TAG_BYTES;
/// Bytes a vector's envelope adds to its numbers.
pub const VECTOR_ENVELOPE_OVERHEAD_BYTES: usize = NONCE_BYTES + TAG_BYTES;

/// A lot's or memory's envelope, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeEnvelope<'a> {
    /// The epoch whose key sealed `recovery`.
    pub epoch: u32,
    /// The nonce of both sealings.
    pub nonce: &'a Nonce,
    /// The node secret, sealed under the epoch key.
    pub recovery: &'a WrappedKey,
    /// The sealed plain bytes, tag last.
    pub payload: &'a [u8],
}

/// A vector's envelope, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorEnvelope<'a> {
    /// The nonce of the sealing.
    pub nonce: &'a Nonce,
    /// The sealed numbers, tag last.
    pub payload: &'a [u8],
}

/// Reads a lot's or memory's envelope; `None` when the bytes are too short to be one.
#[must_use]
pub fn parse_node(bytes: &[u8]) -> Option<NodeEnvelope<'_>> {
    let mut reader = Reader::new(bytes);
    let epoch = reader.u32()?;
    let nonce = reader.take(NONCE_BYTES)?.try_into().ok()?;
    let recovery = reader.take(48)?.try_into().ok()?;
    let payload = reader.rest();
    (payload.len() >= TAG_BYTES).then_some(NodeEnvelope { epoch, nonce, recovery, payload })
}

/// Reads a vector's envelope; `None` when the bytes are too short to be one.
#[must_use]
pub fn parse_vector(bytes: &[u8]) -> Option<VectorEnvelope<'_>> {
    let mut reader = Reader::new(bytes);
    let nonce = reader.take(NONCE_BYTES)?.try_into().ok()?;
    let payload = reader.rest();
    (payload.len() >= TAG_BYTES).then_some(VectorEnvelope { nonce, payload })
}

/// What a lot's or memory's envelope is made of.
#[derive(Debug)]
pub struct NodeSealing<'a> {
    /// The node's secret.
    pub secret: &'a SecretKey,
    /// The epoch in force, and its key.
    pub epoch: (u32, &'a SecretKey),
    /// A fresh random nonce.
    pub nonce: &'a Nonce,
    /// Associated data of the secret under the epoch key.
    pub recovery_associated: &'a [u8],
    /// Associated data of the payload.
    pub content_associated: &'a [u8],
}

/// The envelope of a lot or memory whose plain bytes are `plain`.
#[must_use]
pub fn seal_node(sealing: &NodeSealing<'_>, plain: &[u8]) -> Vec<u8> {
    let (epoch, epoch_key) = sealing.epoch;
    let mut out = Vec::with_capacity(plain.len() + NODE_ENVELOPE_OVERHEAD_BYTES);
    out.extend_from_slice(&epoch.to_le_bytes());
    out.extend_from_slice(sealing.nonce);
    out.extend_from_slice(&wrap_key(epoch_key, sealing.nonce, sealing.recovery_associated, sealing.secret));
    append_payload(&mut out, sealing.secret, sealing.nonce, sealing.content_associated, plain);
    out
}

/// The envelope of a vector whose numbers are `plain`, sealed under its node's `secret`.
#[must_use]
pub fn seal_vector(secret: &SecretKey, nonce: &Nonce, associated: &[u8], plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(plain.len() + VECTOR_ENVELOPE_OVERHEAD_BYTES);
    out.extend_from_slice(nonce);
    append_payload(&mut out, secret, nonce, associated, plain);
    out
}

fn append_payload(out: &mut Vec<u8>, secret: &SecretKey, nonce: &Nonce, associated: &[u8], plain: &[u8]) {
    let start = out.len();
    out.extend_from_slice(plain);
    let tag = seal_in_place(secret, nonce, associated, out.get_mut(start..).unwrap_or_default());
    out.extend_from_slice(&tag);
}

/// Opens a payload sealed under `secret`: the plain bytes.
///
/// # Errors
///
/// `NotAuthentic` when the secret, nonce or associated data differ from the sealing's, or a byte
/// changed.
pub fn open_payload(
    secret: &SecretKey,
    nonce: &Nonce,
    associated: &[u8],
    payload: &[u8],
) -> Result<Vec<u8>, super::NotAuthentic> {
    let split = payload.len().checked_sub(TAG_BYTES).ok_or(super::NotAuthentic)?;
    let (sealed, tag) = payload.split_at(split);
    let tag: &[u8; TAG_BYTES] = tag.try_into().map_err(|_| super::NotAuthentic)?;
    let mut plain = sealed.to_vec();
    super::open_in_place(secret, nonce, associated, &mut plain, tag)?;
    Ok(plain)
}

/// The plain bytes of a lot: its label, then its content.
#[must_use]
pub fn lot_plain_bytes(label: &str, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + label.len() + content.len());
    out.extend_from_slice(&crate::convert::field_length_u16(label.len()).to_le_bytes());
    out.extend_from_slice(label.as_bytes());
    out.extend_from_slice(content);
    out
}

/// Splits a lot's plain bytes into its label and content; `None` when they are not a lot's.
#[must_use]
pub fn split_lot_plain_bytes(plain: &[u8]) -> Option<(&str, &[u8])> {
    let mut reader = Reader::new(plain);
    let length = reader.u16()?;
    let label = core::str::from_utf8(reader.take(usize::from(length))?).ok()?;
    Some((label, reader.rest()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::{unwrap_key, NotAuthentic};

    #[test]
    fn a_sealed_lot_opens_with_its_secret_and_yields_its_secret_under_the_epoch_key() {
        let (secret, epoch_key, nonce) = ([1u8; 32], [2u8; 32], [3u8; 24]);
        let plain = lot_plain_bytes("web", b"text that must not show");
        let sealing = NodeSealing {
            secret: &secret,
            epoch: (4, &epoch_key),
            nonce: &nonce,
            recovery_associated: b"recovery",
            content_associated: b"content",
        };
        let bytes = seal_node(&sealing, &plain);
        assert_eq!(bytes.len(), plain.len() + NODE_ENVELOPE_OVERHEAD_BYTES);
        assert!(!bytes.windows(5).any(|window| window == b"text "));
        let envelope = parse_node(&bytes).unwrap();
        assert_eq!(envelope.epoch, 4);
        assert_eq!(unwrap_key(&epoch_key, envelope.nonce, b"recovery", envelope.recovery), Ok(secret));
        let opened = open_payload(&secret, envelope.nonce, b"content", envelope.payload).unwrap();
        assert_eq!(split_lot_plain_bytes(&opened), Some(("web", &b"text that must not show"[..])));
        assert_eq!(open_payload(&secret, envelope.nonce, b"elsewhere", envelope.payload), Err(NotAuthentic));
        assert_eq!(open_payload(&[9u8; 32], envelope.nonce, b"content", envelope.payload), Err(NotAuthentic));
    }

    #[test]
    fn short_bytes_are_no_envelope() {
        assert_eq!(parse_node(&[0u8; NODE_ENVELOPE_OVERHEAD_BYTES - 1]), None);
        assert!(parse_node(&[0u8; NODE_ENVELOPE_OVERHEAD_BYTES]).is_some());
        assert_eq!(parse_vector(&[0u8; VECTOR_ENVELOPE_OVERHEAD_BYTES - 1]), None);
        assert_eq!(open_payload(&[0; 32], &[0; 24], b"", &[0; 15]), Err(NotAuthentic));
        assert_eq!(split_lot_plain_bytes(&[5, 0, b'a']), None);
    }

    #[test]
    fn a_vector_opens_with_its_node_secret() {
        let bytes = seal_vector(&[1; 32], &[2; 24], b"here", &[0, 0, 128, 63]);
        let envelope = parse_vector(&bytes).unwrap();
        assert_eq!(open_payload(&[1; 32], envelope.nonce, b"here", envelope.payload).unwrap(), [0, 0, 128, 63]);
    }
}
