//! An attacker who holds an encrypted agent's token and some of its files (copies of segments,
//! of the key table, of the epoch file, old or current) and tries every key those yield on
//! every sealed record: what an Erase must leave unopenable, tests ask of this.
//!
//! The keys tried: every node secret a key table slot holds, unwrapped with the token's slot
//! key (checksums ignored); every epoch key an epoch slot holds, unwrapped with the token's
//! epoch wrapping key (checksums ignored); every node secret a record carries under one of
//! those epoch keys; and the two wrapping keys themselves. Each is tried on every sealed lot,
//! memory and vector, whatever node it came from.

use cheesedb::Token;
use cheesedb_core::codec::epoch_file::EPOCH_SLOT_BYTES;
use cheesedb_core::codec::key_file_header::KEY_FILE_HEADER_BYTES;
use cheesedb_core::codec::key_table_file::KEY_SLOT_BYTES;
use cheesedb_core::codec::record::{self, Body, Record};
use cheesedb_core::codec::segment_header::SEGMENT_HEADER_BYTES;
use cheesedb_core::seal::envelope::{parse_node, split_lot_plain_bytes};
use cheesedb_core::seal::{
    epoch_associated_data, open_sealed, recovery_associated_data, slot_associated_data, unwrap_key, AgentSecrets,
    Nonce, SecretKey, WrappedKey, NONCE_BYTES,
};

/// The keys an attacker got out of key files with the token.
#[derive(Debug, Default, Clone)]
pub struct Keys {
    /// Node secrets found in key table slots.
    pub node_secrets: Vec<SecretKey>,
    /// Epoch keys, by epoch number.
    pub epoch_keys: Vec<(u32, SecretKey)>,
    /// The token's wrapping keys.
    pub wrapping_keys: Vec<SecretKey>,
}

/// What opened: the record's node, and its plain bytes (a lot: label, then content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The node the record belongs to.
    pub id: u64,
    /// The plain bytes: a lot's label and content joined, a memory's content, a vector's numbers.
    pub plain: Vec<u8>,
}

impl Keys {
    /// What the token alone yields: its two wrapping keys.
    pub fn from_token(token: &Token) -> Keys {
        let secrets = AgentSecrets::from_token(token.as_bytes());
        Keys { wrapping_keys: vec![secrets.slot_key, secrets.epoch_wrapping_key], ..Keys::default() }
    }

    /// Adds every node secret the slots of `key_table` (a whole key table file of agent
    /// `agent`) open to with the token.
    pub fn add_key_table(&mut self, token: &Token, agent: u64, key_table: &[u8]) {
        let slot_key = AgentSecrets::from_token(token.as_bytes()).slot_key;
        let slots = key_table.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
        for (index, slot) in slots.chunks_exact(KEY_SLOT_BYTES).enumerate() {
            let id = index as u64 + 1;
            let (nonce, wrapped) = split_wrapped(&slot[..NONCE_BYTES + 48]);
            if let Ok(secret) = unwrap_key(&slot_key, &nonce, &slot_associated_data(agent, id), &wrapped) {
                self.node_secrets.push(secret);
            }
        }
    }

    /// Adds every epoch key the slots of `epochs` (a whole epoch file of agent `agent`) open
    /// to with the token.
    pub fn add_epochs(&mut self, token: &Token, agent: u64, epochs: &[u8]) {
        let wrapping = AgentSecrets::from_token(token.as_bytes()).epoch_wrapping_key;
        let slots = epochs.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
        for (index, slot) in slots.chunks_exact(EPOCH_SLOT_BYTES).enumerate() {
            let epoch = index as u32 + 1;
            let start_sequence = u64::from_le_bytes(slot[..8].try_into().unwrap());
            let (nonce, wrapped) = split_wrapped(&slot[8..8 + NONCE_BYTES + 48]);
            let associated = epoch_associated_data(agent, epoch, start_sequence);
            if let Ok(key) = unwrap_key(&wrapping, &nonce, &associated, &wrapped) {
                self.epoch_keys.push((epoch, key));
            }
        }
    }

    /// Every key worth trying on the sealed records of `segments`: the node secrets, those the
    /// records carry under a known epoch key, and the wrapping keys.
    fn candidates(&self, agent: u64, segments: &[Vec<u8>]) -> Vec<SecretKey> {
        let mut candidates = self.node_secrets.clone();
        candidates.extend(self.wrapping_keys.iter().copied());
        candidates.extend(self.epoch_keys.iter().map(|(_, key)| *key));
        for segment in segments {
            for (record, id, sealed) in sealed_records(segment) {
                let (Body::Lot { .. } | Body::Memory { .. }) = record.body else { continue };
                let Some(envelope) = parse_node(sealed) else { continue };
                for (epoch, key) in &self.epoch_keys {
                    for claimed in [envelope.epoch, *epoch] {
                        let associated = recovery_associated_data(agent, id, claimed);
                        if let Ok(secret) = unwrap_key(key, envelope.nonce, &associated, envelope.recovery) {
                            candidates.push(secret);
                        }
                    }
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates
    }

    /// Every sealed record of `segments` (whole segment files of agent `agent`) that one of the
    /// keys opens, with what it holds.
    pub fn open_all(&self, agent: u64, segments: &[Vec<u8>]) -> Vec<Opened> {
        let candidates = self.candidates(agent, segments);
        let mut opened = Vec::new();
        for segment in segments {
            for (record, id, sealed) in sealed_records(segment) {
                for secret in &candidates {
                    if let Ok(plain) = open_sealed(&record, id, secret, sealed) {
                        let plain = match record.body {
                            Body::Lot { .. } => match split_lot_plain_bytes(&plain) {
                                Some((label, content)) => [label.as_bytes(), content].concat(),
                                None => plain,
                            },
                            _ => plain,
                        };
                        opened.push(Opened { id, plain });
                    }
                }
            }
        }
        opened
    }
}

/// Whether any of `opened` holds `needle`.
pub fn any_holds(opened: &[Opened], needle: &[u8]) -> bool {
    opened.iter().any(|opened| opened.plain.windows(needle.len()).any(|window| window == needle))
}

fn split_wrapped(bytes: &[u8]) -> (Nonce, WrappedKey) {
    let (nonce, wrapped) = bytes.split_at(NONCE_BYTES);
    (nonce.try_into().unwrap(), wrapped.try_into().unwrap())
}

/// The sealed records of a segment file whose content is still there: the record, its node,
/// its sealed bytes.
pub fn sealed_records(segment: &[u8]) -> Vec<(Record<'_>, u64, &[u8])> {
    let mut found = Vec::new();
    let mut position = SEGMENT_HEADER_BYTES;
    while let Some(Ok((record, length))) = segment.get(position..).map(record::decode) {
        if let Body::Lot { id, content, .. } | Body::Memory { id, content, .. } | Body::Vector { id, content } =
            record.body
        {
            if let (true, Some((_, sealed))) = (content.sealed, content.present) {
                found.push((record, id, sealed));
            }
        }
        position += length;
    }
    found
}
