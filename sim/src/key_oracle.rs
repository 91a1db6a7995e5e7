//! An oracle for encrypted agents that shares no reading code with the engine: it holds an
//! agent's token and the bytes of its files, as someone who kept the token and copied the folder
//! would, unwraps every key it can (checksums ignored: an attacker does not care whether a slot
//! checks), and tries those keys on the sealed records of segments, current or copied earlier.
//!
//! What the keys are and where they lie is in docs/FORMAT.md: each lot and memory has a secret,
//! held in the key table under the slot key and in its own record under the epoch key in force
//! when it was written; vectors are sealed under their node's secret. An Erase must leave no way
//! to any erased node's secret: its slot zeroed, and every epoch that sealed a copy destroyed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::codec::epoch_file::EPOCH_SLOT_BYTES;
use cheesedb_core::codec::key_file_header::KEY_FILE_HEADER_BYTES;
use cheesedb_core::codec::key_table_file::{key_slot_offset, KEY_SLOT_BYTES};
use cheesedb_core::codec::record::{self, Body, Record};
use cheesedb_core::codec::segment_header::SEGMENT_HEADER_BYTES;
use cheesedb_core::seal::envelope::{parse_node, split_lot_plain_bytes};
use cheesedb_core::seal::{
    epoch_associated_data, open_sealed, recovery_associated_data, slot_associated_data, unwrap_key, AgentSecrets,
    Nonce, SecretKey, WrappedKey, NONCE_BYTES,
};

/// Bytes of a wrapped key: the key, then its tag.
const WRAPPED_BYTES: usize = 48;

/// Every key that an encrypted agent's token and its key files yield.
pub struct KeyRing {
    agent: u64,
    slot_key: SecretKey,
    key_table: Vec<u8>,
    epoch_keys: Vec<SecretKey>,
    /// The secrets of the slots unwrapped so far (several checks ask for the same).
    slot_secrets: RefCell<BTreeMap<u64, Option<SecretKey>>>,
}

impl KeyRing {
    /// The keys of agent `agent`, whose token is `token`, from the bytes of its key table and
    /// of its epoch file: every epoch slot whose bytes unwrap under the epoch wrapping key gives
    /// a key, whatever its checksum says.
    pub fn new(agent: u64, token: &[u8; 32], key_table: Vec<u8>, epochs: &[u8]) -> KeyRing {
        let secrets = AgentSecrets::from_token(token);
        let slots = epochs.get(KEY_FILE_HEADER_BYTES..).unwrap_or_default();
        let epoch_keys = (1u32..)
            .zip(slots.chunks_exact(EPOCH_SLOT_BYTES))
            .filter_map(|(epoch, slot)| epoch_key(agent, &secrets.epoch_wrapping_key, epoch, slot))
            .collect();
        KeyRing { agent, slot_key: secrets.slot_key, key_table, epoch_keys, slot_secrets: RefCell::default() }
    }

    /// How many epoch keys the files still yield.
    pub fn live_epochs(&self) -> usize {
        self.epoch_keys.len()
    }

    /// The secret the key table slot of `id` yields, if its bytes unwrap.
    pub fn slot_secret(&self, id: u64) -> Option<SecretKey> {
        if let Some(known) = self.slot_secrets.borrow().get(&id) {
            return *known;
        }
        let secret = self.unwrap_slot(id);
        self.slot_secrets.borrow_mut().insert(id, secret);
        secret
    }

    fn unwrap_slot(&self, id: u64) -> Option<SecretKey> {
        let start = usize::try_from(key_slot_offset(id)?).ok()?;
        // A slot the table's end cuts short still yields its key if nonce and key are there.
        let slot = self.key_table.get(start..(start + KEY_SLOT_BYTES).min(self.key_table.len()))?;
        let (nonce, wrapped) = nonce_and_wrapped(slot)?;
        unwrap_key(&self.slot_key, &nonce, &slot_associated_data(self.agent, id), &wrapped).ok()
    }

    /// The secrets the copy in a lot's or memory's sealed bytes yields under every epoch key.
    fn recovered_secrets(&self, id: u64, sealed: &[u8]) -> Vec<SecretKey> {
        let Some(envelope) = parse_node(sealed) else { return Vec::new() };
        let associated = recovery_associated_data(self.agent, id, envelope.epoch);
        self.epoch_keys
            .iter()
            .filter_map(|key| unwrap_key(key, envelope.nonce, &associated, envelope.recovery).ok())
            .collect()
    }
}

/// The key of `epoch` whose slot is `slot`, if its bytes unwrap.
fn epoch_key(agent: u64, wrapping: &SecretKey, epoch: u32, slot: &[u8]) -> Option<SecretKey> {
    let start_sequence = u64::from_le_bytes(slot.get(..8)?.try_into().ok()?);
    let (nonce, wrapped) = nonce_and_wrapped(slot.get(8..)?)?;
    unwrap_key(wrapping, &nonce, &epoch_associated_data(agent, epoch, start_sequence), &wrapped).ok()
}

/// The nonce and the wrapped key at the start of `bytes`; `None` when they are all zeros (a
/// destroyed key: nothing to try).
fn nonce_and_wrapped(bytes: &[u8]) -> Option<(Nonce, WrappedKey)> {
    let both = bytes.get(..NONCE_BYTES + WRAPPED_BYTES)?;
    if both.iter().all(|byte| *byte == 0) {
        return None;
    }
    let nonce = both.get(..NONCE_BYTES)?.try_into().ok()?;
    let wrapped = both.get(NONCE_BYTES..)?.try_into().ok()?;
    Some((nonce, wrapped))
}

/// The bytes of one record of a lot, memory or vector whose content is present and sealed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SealedRecord {
    /// The node it belongs to.
    pub id: u64,
    /// A lot's or a memory's record (not a vector's).
    pub is_node: bool,
    /// The whole record, as the segment holds it.
    pub bytes: Vec<u8>,
}

impl SealedRecord {
    /// The record, decoded again, and its sealed bytes.
    fn parts(&self) -> Option<(Record<'_>, &[u8])> {
        let (decoded, _) = record::decode(&self.bytes).ok()?;
        let (_, sealed) = decoded.content()?.present?;
        Some((decoded, sealed))
    }

    /// Its plain bytes if `secret` opens it.
    fn open_with(&self, secret: &SecretKey) -> Option<Vec<u8>> {
        let (decoded, sealed) = self.parts()?;
        open_sealed(&decoded, self.id, secret, sealed).ok()
    }
}

/// What a walk over a segment of an encrypted agent found.
#[derive(Debug, Default)]
pub struct SegmentWalk {
    /// The sealed records with their content present.
    pub records: Vec<SealedRecord>,
    /// The first record that breaks the format of an encrypted agent, described (the words
    /// "in the clear" always among them): content in the clear, or a sealed lot whose label is.
    pub in_the_clear: Option<String>,
    /// Records of another agent (commit markers among them) found in the segment, passed over.
    pub foreign_records: u64,
}

/// Walks the records of a segment image of agent `agent` from its header to the first bytes that
/// are not a record (the end of what was written, or a tear). A record of another agent, which a
/// misdirected write of the disk put there, is passed over: its content is that agent's, in the
/// form that agent keeps it, and the engine refuses it as damage when it reads it here.
pub fn walk_segment(bytes: &[u8], agent: u64) -> SegmentWalk {
    let mut walk = SegmentWalk::default();
    let mut position = SEGMENT_HEADER_BYTES;
    while let Some(rest) = bytes.get(position..).filter(|rest| !rest.is_empty()) {
        let Ok((found, length)) = record::decode(rest) else { break };
        if found.identity.agent != agent {
            walk.foreign_records += 1;
            position += length;
            continue;
        }
        let node = match found.body {
            Body::Lot { id, label, .. } => {
                if !label.is_empty() && walk.in_the_clear.is_none() {
                    walk.in_the_clear =
                        Some(format!("the lot record of node {id} at offset {position} has its label in the clear"));
                }
                Some((id, true))
            }
            Body::Memory { id, .. } => Some((id, true)),
            Body::Vector { id, .. } => Some((id, false)),
            _ => None,
        };
        if let (Some((id, is_node)), Some(content)) = (node, found.content()) {
            if content.present.is_some() && content.sealed {
                let bytes = rest.get(..length).unwrap_or_default().to_vec();
                walk.records.push(SealedRecord { id, is_node, bytes });
            } else if content.present.is_some() && walk.in_the_clear.is_none() {
                walk.in_the_clear =
                    Some(format!("a record of node {id} at offset {position} holds content in the clear"));
            }
        }
        position += length;
    }
    walk
}

/// Sealed records kept from copies of an agent's segments taken before its Erases: each
/// distinct record once, by node.
#[derive(Debug, Clone, Default)]
pub struct RecordArchive {
    by_id: BTreeMap<u64, BTreeSet<SealedRecord>>,
}

impl RecordArchive {
    /// Keeps every sealed record of the segment image `bytes` of agent `agent`.
    pub fn add_segment(&mut self, bytes: &[u8], agent: u64) {
        for found in walk_segment(bytes, agent).records {
            self.by_id.entry(found.id).or_default().insert(found);
        }
    }

    /// The kept records of the nodes in `ids`.
    pub fn records_of(&self, ids: &BTreeSet<u64>) -> Vec<SealedRecord> {
        ids.iter().filter_map(|id| self.by_id.get(id)).flatten().cloned().collect()
    }

    /// How many distinct records are kept.
    pub fn len(&self) -> usize {
        self.by_id.values().map(BTreeSet::len).sum()
    }

    /// Whether no record is kept.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// `records` of the nodes `wanted` accepts, by node.
fn by_node(records: &[SealedRecord], wanted: impl Fn(u64) -> bool) -> BTreeMap<u64, Vec<&SealedRecord>> {
    let mut by_node: BTreeMap<u64, Vec<&SealedRecord>> = BTreeMap::new();
    for found in records.iter().filter(|found| wanted(found.id)) {
        by_node.entry(found.id).or_default().push(found);
    }
    by_node
}

/// A record of an erased node that a key of the ring opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedErased {
    /// The node.
    pub id: u64,
    /// Where the key came from: its slot, or a record's copy under a live epoch.
    pub key_from: &'static str,
    /// A lot's or memory's record, or a vector's.
    pub record_kind: &'static str,
}

/// Every secret of node `id` that `ring` yields for its `records` (the slot's, and the copies
/// in the node's own lot or memory records under every live epoch), with where each came from.
fn obtainable_secrets(ring: &KeyRing, id: u64, records: &[&SealedRecord]) -> Vec<(SecretKey, &'static str)> {
    let mut secrets: Vec<(SecretKey, &'static str)> =
        ring.slot_secret(id).map(|secret| (secret, "its key table slot")).into_iter().collect();
    for found in records.iter().filter(|found| found.is_node) {
        if let Some((_, sealed)) = found.parts() {
            let recovered = ring.recovered_secrets(id, sealed);
            secrets.extend(recovered.into_iter().map(|secret| (secret, "a record's copy under a live epoch key")));
        }
    }
    secrets
}

/// The first record among `records` of a node in `erased` that a key of `ring` opens.
pub fn first_erased_that_opens(
    ring: &KeyRing,
    records: &[SealedRecord],
    erased: &BTreeSet<u64>,
) -> Option<OpenedErased> {
    by_node(records, |id| erased.contains(&id)).into_iter().find_map(|(id, doomed)| {
        let secrets = obtainable_secrets(ring, id, &doomed);
        doomed.iter().find_map(|found| {
            let (_, key_from) = secrets.iter().find(|(secret, _)| found.open_with(secret).is_some())?;
            let record_kind = if found.is_node { "lot or memory" } else { "vector" };
            Some(OpenedErased { id, key_from, record_kind })
        })
    })
}

/// The first node of `readable` (node and content) that its key table slot does not bring back
/// from `records`, and why: the slot holds no key, or one that opens none of its records to its
/// content. After an open every such node has its slot: open writes again from the records any
/// slot a crash lost, and a slot whose epoch is gone was durable before the epoch went.
pub fn first_unreadable(
    ring: &KeyRing,
    records: &[SealedRecord],
    readable: &BTreeMap<u64, Vec<u8>>,
) -> Option<(u64, &'static str)> {
    let nodes = by_node(records, |id| readable.contains_key(&id));
    readable.iter().find_map(|(id, content)| {
        let Some(secret) = ring.slot_secret(*id) else { return Some((*id, "its key table slot holds no key")) };
        let is_content = |plain: Vec<u8>| {
            plain == *content || split_lot_plain_bytes(&plain).is_some_and(|(_, text)| text == content.as_slice())
        };
        let records = nodes.get(id).map(Vec::as_slice).unwrap_or_default();
        let opens =
            records.iter().filter(|found| found.is_node).filter_map(|found| found.open_with(&secret)).any(is_content);
        (!opens).then_some((*id, "the key its slot holds opens none of its records to its content"))
    })
}

/// Two nodes among `ids` whose key table slots hold the same secret. Each record's sealing binds
/// its node, so a secret opens only its own node's records, unless the engine gave one secret to
/// two nodes: then the slot of one would open the other, erased or not.
pub fn first_shared_secret(ring: &KeyRing, ids: impl IntoIterator<Item = u64>) -> Option<(u64, u64)> {
    let mut seen: BTreeMap<SecretKey, u64> = BTreeMap::new();
    ids.into_iter().find_map(|id| {
        let secret = ring.slot_secret(id)?;
        seen.insert(secret, id).map(|first| (first, id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::SimStorage;
    use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path, segment_path};
    use cheesedb_core::{Mode, Options, Removal, StoreEngine};

    fn ring(storage: &SimStorage, number: u64, token: &[u8; 32]) -> KeyRing {
        let folder = agent_folder(number);
        let table = storage.file_bytes(&key_table_path(&folder)).unwrap();
        let epochs = storage.file_bytes(&epochs_path(&folder)).unwrap();
        KeyRing::new(number, token, table, &epochs)
    }

    /// Regression (campaign seed 5221): a plaintext agent's record that a misdirected write put in
    /// an encrypted agent's segment is that agent's, not the encrypted agent's text in the clear.
    #[test]
    fn a_record_of_another_agent_in_a_segment_is_passed_over() {
        let storage = SimStorage::without_faults(11);
        let mut store = StoreEngine::open(storage.clone(), Options::default()).unwrap();
        let sealed_token = store.create_encrypted_agent("sealed").unwrap();
        let plain_token = store.create_agent("plain").unwrap();
        let sealed_number = store.authenticate(&sealed_token).unwrap().number();
        let plain_number = store.authenticate(&plain_token).unwrap().number();
        store.open_agent(store.authenticate(&plain_token).unwrap()).unwrap().add_lot("web", b"plain text").unwrap();
        let plain = storage.file_bytes(&segment_path(&agent_folder(plain_number), 1)).unwrap();
        let walk = walk_segment(&plain, sealed_number);
        // The lot and the commit marker that closes its write.
        assert_eq!((walk.in_the_clear, walk.records.len(), walk.foreign_records), (None, 0, 2));
        let own = walk_segment(&plain, plain_number);
        assert!(own.in_the_clear.is_some_and(|what| what.contains("in the clear")));
    }

    #[test]
    fn the_token_opens_what_is_alive_and_nothing_an_erase_covered_even_in_an_older_copy() {
        let storage = SimStorage::without_faults(7);
        let mut store = StoreEngine::open(storage.clone(), Options::default()).unwrap();
        let token = store.create_encrypted_agent("sealed").unwrap();
        let number = store.authenticate(&token).unwrap().number();
        let mut agent = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let kept = agent.add_lot("web", b"kept text").unwrap();
        let doomed = agent.add_lot("web", b"doomed text").unwrap();
        let segment = segment_path(&agent_folder(number), 1);
        let walk = walk_segment(&storage.file_bytes(&segment).unwrap(), number);
        assert_eq!(walk.in_the_clear, None);
        assert_eq!(walk.records.len(), 2);
        let mut archive = RecordArchive::default();
        archive.add_segment(&storage.file_bytes(&segment).unwrap(), number);
        let before = ring(&storage, number, token.as_bytes());
        let erased = BTreeSet::from([doomed.get()]);
        assert!(first_erased_that_opens(&before, &walk.records, &erased).is_some());
        agent.recall(doomed, Mode::Fair, Removal::Erase).unwrap();
        let after = ring(&storage, number, token.as_bytes());
        assert_eq!(after.live_epochs(), 1);
        let now = walk_segment(&storage.file_bytes(&segment).unwrap(), number).records;
        assert_eq!(first_erased_that_opens(&after, &now, &erased), None);
        assert_eq!(first_erased_that_opens(&after, &archive.records_of(&erased), &erased), None);
        let readable = BTreeMap::from([(kept.get(), b"kept text".to_vec())]);
        assert_eq!(first_unreadable(&after, &now, &readable), None);
        let wrong = BTreeMap::from([(kept.get(), b"other text".to_vec())]);
        assert_eq!(first_unreadable(&after, &now, &wrong).map(|(id, _)| id), Some(kept.get()));
        let erased_one = BTreeMap::from([(doomed.get(), b"doomed text".to_vec())]);
        assert_eq!(first_unreadable(&after, &now, &erased_one).map(|(id, _)| id), Some(doomed.get()));
        assert_eq!(first_shared_secret(&after, 1..=2), None);
    }
}
