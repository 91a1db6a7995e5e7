//! Sealing the records of a durable write of an encrypted agent: each new lot and memory gets a
//! fresh secret, its plain bytes are sealed under it, and its slot for the key table is made.

use alloc::vec::Vec;

use super::append::{Entry, SEALED_RANDOM_BYTES};
use super::AgentEngine;
use crate::codec::record::SALT_BYTES;
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::log::names::key_table_path;
use crate::seal::envelope::{lot_plain_bytes, seal_node, seal_vector, NodeSealing};
use crate::seal::{content_associated_data, recovery_associated_data, Nonce, SecretKey, KEY_BYTES};
use crate::storage::Storage;

/// The sealed contents of one write's entries, and the key table slots of its new nodes.
#[derive(Debug, Default)]
pub(super) struct SealedEntries {
    /// Entry by entry, the content bytes its record holds (empty for a recall).
    pub(super) contents: Vec<Vec<u8>>,
    /// The slots of the new lots and memories, one after another from `first_id`.
    pub(super) slots: Vec<u8>,
    /// The id of the first new lot or memory.
    pub(super) first_id: u64,
}

impl<S: Storage> AgentEngine<S> {
    /// Seals `entries`, the write whose first record has sequence `first_sequence` and whose
    /// first new node is `first_id`; `None` for a plaintext agent. `random` holds
    /// [`SEALED_RANDOM_BYTES`] per entry, the salt first.
    pub(super) fn seal_entries(
        &self,
        entries: &[Entry<'_>],
        random: &[u8],
        first_sequence: u64,
        first_id: u64,
    ) -> Result<Option<SealedEntries>, Error> {
        let Some(sealing) = self.sealing.as_ref() else { return Ok(None) };
        let (epoch, epoch_key) =
            sealing.current_epoch().ok_or(Error::Internal { what: InternalRule::LiveEpochInForce })?;
        let mut sealed = SealedEntries { first_id, ..SealedEntries::default() };
        let mut new_secrets: Vec<(u64, SecretKey)> = Vec::new();
        let mut next_id = first_id;
        for ((entry, chunk), sequence) in
            entries.iter().zip(random.chunks_exact(SEALED_RANDOM_BYTES)).zip(first_sequence..)
        {
            let (secret, nonce) = secret_and_nonce(chunk)?;
            let new_node = |id: u64, kind: u8, plain: &[u8]| {
                let recovery = recovery_associated_data(self.agent, id, epoch);
                let associated = content_associated_data(self.agent, id, sequence, kind);
                let parts = NodeSealing {
                    secret: &secret,
                    epoch: (epoch, &epoch_key),
                    nonce: &nonce,
                    recovery_associated: &recovery,
                    content_associated: &associated,
                };
                (seal_node(&parts, plain), sealing.slot_bytes(id, &nonce, &secret))
            };
            let content = match *entry {
                Entry::Lot { .. } | Entry::Memory { .. } => {
                    let (envelope, slot) = match *entry {
                        Entry::Lot { label, content } => new_node(next_id, 1, &lot_plain_bytes(label, content)),
                        Entry::Memory { content, .. } => new_node(next_id, 2, content),
                        _ => return Err(Error::Internal { what: InternalRule::OnlyLotsAndMemoriesAreNewNodes }),
                    };
                    sealed.slots.extend_from_slice(&slot);
                    new_secrets.push((next_id, secret));
                    next_id += 1;
                    envelope
                }
                Entry::Vector { id, numbers } => {
                    let pending = new_secrets.iter().find(|(new, _)| *new == id).map(|(_, secret)| *secret);
                    let node_secret = match pending {
                        Some(secret) => secret,
                        None => sealing.secret(id)?.ok_or_else(|| Error::Corrupt {
                            file: key_table_path(&self.folder),
                            offset: 0,
                            reason: CorruptReason::KeyMissingForReadableNode,
                        })?,
                    };
                    seal_vector(&node_secret, &nonce, &content_associated_data(self.agent, id, sequence, 6), numbers)
                }
                Entry::Shared { .. } => {
                    // No content to seal, but a key slot all the same: the key table holds one
                    // for every id, in order.
                    sealed.slots.extend_from_slice(&sealing.slot_bytes(next_id, &nonce, &secret));
                    next_id += 1;
                    Vec::new()
                }
                Entry::Recall { .. } | Entry::RecallAll { .. } | Entry::Member { .. } => Vec::new(),
            };
            sealed.contents.push(content);
        }
        Ok(Some(sealed))
    }
}

fn secret_and_nonce(chunk: &[u8]) -> Result<(SecretKey, Nonce), Error> {
    let malformed = Error::Internal { what: InternalRule::RandomBytesHoldSecretAndNonce };
    let secret = chunk.get(SALT_BYTES..SALT_BYTES + KEY_BYTES).and_then(|bytes| bytes.try_into().ok());
    let nonce = chunk.get(SALT_BYTES + KEY_BYTES..).and_then(|bytes| bytes.try_into().ok());
    Ok((secret.ok_or(malformed)?, nonce.ok_or(Error::Internal { what: InternalRule::RandomBytesHoldNonce })?))
}
