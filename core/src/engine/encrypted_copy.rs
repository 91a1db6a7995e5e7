//! Encrypting a plaintext agent: its log written again, record by record and in order, into the
//! log of a new encrypted agent.
//!
//! Every lot, memory (with its legs and tracked parents), recall (with its mode and removal) and
//! vector keeps its id and its place in the history; each content still present is sealed as a
//! write of an encrypted agent seals it, under a fresh node secret. A content that an Erase or a
//! compaction took stays absent: its record is written erased, with no key in the key table,
//! exactly as an encrypted agent keeps a node whose keys an Erase destroyed. A lot whose content
//! is gone loses its label with it, since an encrypted agent's labels live inside the sealed
//! bytes. The new log has its own chain (it commits to the sealed bytes), so the fingerprint
//! changes.
//!
//! The store switches its catalog to the new agent only once this copy is durable
//! (`store::encrypt`): until then the new folder is an orphan that the next open removes.

use alloc::string::String;
use alloc::vec::Vec;

use super::files::read_all;
use super::replay::apply_record;
use super::sealed_open::erase_sequence;
use super::{io_error, AgentEngine};
use crate::codec::record::{self, commit_marker, Body, ContentBlock, Identity, Record, SALT_BYTES};
use crate::codec::segment_header::SEGMENT_HEADER_BYTES;
use crate::corrupt_reason::CorruptReason;
use crate::digest::{chain_genesis, chain_next, content_digest, equal_in_constant_time, Hash};
use crate::error::Error;
use crate::error_facts::{InternalRule, Limit, StorageOperation};
use crate::limits::{self, BATCH_MAX_BYTES};
use crate::log::names::segment_path;
use crate::log::scan::{check_header, scan_records, Expected};
use crate::seal::envelope::{lot_plain_bytes, seal_node, seal_vector, NodeSealing};
use crate::seal::{content_associated_data, kind_byte, recovery_associated_data, Nonce, SecretKey};
use crate::storage::Storage;

/// Bytes of records gathered before they are written and synced as one commit: large enough
/// that a big agent takes few syncs, far below the limit of one write.
const COPY_BATCH_BYTES: usize = 4 * 1024 * 1024;
const _: () = assert!(COPY_BATCH_BYTES + crate::codec::record::RECORD_MAX_BYTES < BATCH_MAX_BYTES);

/// Random bytes drawn from the storage at once, and handed out as the copy needs them.
const RANDOM_POOL_BYTES: usize = 64 * 1024;

/// The records of the copy gathered and not yet written.
struct PendingCopy {
    /// The records, encoded, then the commit marker once the batch is closed.
    bytes: Vec<u8>,
    /// How many records.
    records: u32,
    /// The sequence of the last record gathered.
    sequence: u64,
    /// The chain hash after the last record gathered.
    chain: Hash,
    /// The key table slots of the new node secrets, in runs of consecutive ids.
    slots: Vec<(u64, Vec<u8>)>,
    /// The node secrets drawn in this batch, for the vectors that follow their nodes in it.
    secrets: Vec<(u64, SecretKey)>,
    /// The sequence of the last recall with Erase gathered.
    last_erase: Option<u64>,
    /// Scratch space for the fields the chain commits to.
    fields: Vec<u8>,
}

impl PendingCopy {
    fn is_empty(&self) -> bool {
        self.records == 0
    }

    fn add_slot(&mut self, id: u64, slot: &[u8]) {
        match self.slots.last_mut() {
            Some((first, bytes)) if *first + (bytes.len() / slot.len().max(1)) as u64 == id => {
                bytes.extend_from_slice(slot)
            }
            _ => self.slots.push((id, slot.to_vec())),
        }
    }

    fn secret_of(&self, id: u64) -> Option<SecretKey> {
        self.secrets.iter().rev().find(|(node, _)| *node == id).map(|(_, secret)| *secret)
    }
}

/// Random bytes drawn in large pieces: one call to the storage serves many records.
struct RandomPool {
    bytes: Vec<u8>,
    used: usize,
}

impl RandomPool {
    fn take<S: Storage, const N: usize>(&mut self, storage: &S, folder: &str) -> Result<[u8; N], Error> {
        if self.used + N > self.bytes.len() {
            self.bytes.resize(RANDOM_POOL_BYTES.max(N), 0);
            storage
                .fill_random(&mut self.bytes)
                .map_err(|error| io_error(StorageOperation::DrawingRandomBytes, folder, error))?;
            self.used = 0;
        }
        let taken = self.bytes.get(self.used..self.used + N).and_then(|bytes| <[u8; N]>::try_from(bytes).ok());
        self.used += N;
        taken.ok_or(Error::Internal { what: InternalRule::RandomPoolHoldsItsBytes })
    }
}

/// A content as the new record holds it: sealed bytes with their salt, or nothing.
struct NewContent {
    digest: Hash,
    present: Option<([u8; SALT_BYTES], Vec<u8>)>,
}

impl NewContent {
    fn block(&self) -> ContentBlock<'_> {
        ContentBlock {
            digest: self.digest,
            present: self.present.as_ref().map(|(salt, sealed)| (salt, sealed.as_slice())),
            erased_padding_bytes: 0,
            sealed: true,
        }
    }
}

impl<S: Storage> AgentEngine<S> {
    /// Writes into this agent, new, encrypted and empty, every committed record of `source`, a
    /// plaintext agent, in order and with the same ids, each content still present sealed (see
    /// the module's note). Each batch of records is durable before the next begins and is then
    /// replayed into this agent's graph, as open would replay it; at the end the epochs are
    /// settled as an open settles them. Checks `source` as it goes: the chain, every checksum
    /// and commit marker, and the digest of every content it copies.
    pub(crate) fn copy_sealed_from(&mut self, source: &AgentEngine<S>) -> Result<(), Error> {
        let empty = self.log.sequence() == 0 && self.graph.is_empty();
        if self.sealing.is_none() || source.sealing.is_some() || !empty {
            return Err(Error::Internal { what: InternalRule::CopyIntoNewEncryptedAgent });
        }
        self.check_writable()?;
        let mut pending = PendingCopy {
            bytes: Vec::new(),
            records: 0,
            sequence: self.log.sequence(),
            chain: self.log.chain(),
            slots: Vec::new(),
            secrets: Vec::new(),
            last_erase: None,
            fields: Vec::new(),
        };
        let mut random = RandomPool { bytes: Vec::new(), used: 0 };
        let (mut sequence_before, mut chain_before) = (0, chain_genesis(source.agent));
        for segment in 1..=source.segments.count() {
            let path = segment_path(&source.folder, segment);
            let bytes = source.with_segment(segment, &path, read_all)?;
            let corrupt = |offset: u64, reason| Error::Corrupt { file: path.clone(), offset, reason };
            let expected = Expected { agent: source.agent, segment, sequence_before, chain_before };
            check_header(&bytes, &expected).map_err(|damage| corrupt(damage.offset, damage.reason))?;
            let end = scan_records(&bytes, &expected, SEGMENT_HEADER_BYTES, |record, offset| {
                if !record.is_chained() {
                    return Ok(());
                }
                self.copy_record(record, &mut pending, &mut random).map_err(|error| match error {
                    CopyError::Source(reason) => corrupt(offset, reason),
                    CopyError::Engine(error) => error,
                })
            })?;
            if let Some(damage) = end.damage {
                return Err(corrupt(damage.offset, damage.reason));
            }
            if !end.is_clean() {
                return Err(corrupt(end.committed_end, CorruptReason::UncommittedBytesAfterLastCommit));
            }
            (sequence_before, chain_before) = (end.sequence, end.chain);
        }
        self.write_copied(&mut pending)?;
        // What an open would do now: an Erase in the history starts a new epoch and destroys the
        // first one, once every slot is durable.
        self.finish_key_erasures()?;
        if let Some(sealing) = self.sealing.as_mut() {
            sealing.sync_key_table()?;
        }
        Ok(())
    }

    /// Adds the sealed form of `record`, a chained record of the source, to `pending`, and
    /// writes `pending` once it is large enough.
    fn copy_record(
        &mut self,
        record: &Record<'_>,
        pending: &mut PendingCopy,
        random: &mut RandomPool,
    ) -> Result<(), CopyError> {
        if pending.is_empty() && self.log.write_offset() >= self.options.segment_size_max_bytes {
            self.roll()?;
        }
        let sequence = pending.sequence + 1;
        if record.identity.sequence != sequence {
            return Err(CopyError::Engine(Error::Internal { what: InternalRule::CopiedRecordKeepsSequence }));
        }
        let identity = Identity { agent: self.agent, segment: self.active_segment(), sequence };
        let kind = kind_byte(&record.body);
        // Assigned in the arm of each record that has a content, which its body then borrows.
        let content: NewContent;
        let body = match record.body {
            Body::Lot { id, label, content: old } => {
                let plain = plain_content(&old)?.map(|text| lot_plain_bytes(label, text));
                content = self.seal_node_content(id, sequence, kind, plain, pending, random)?;
                // The label is sealed with the content, never kept in the clear.
                Body::Lot { id, label: "", content: content.block() }
            }
            Body::Memory { id, legs, tracked, content: old } => {
                let plain = plain_content(&old)?.map(<[u8]>::to_vec);
                content = self.seal_node_content(id, sequence, kind, plain, pending, random)?;
                Body::Memory { id, legs, tracked, content: content.block() }
            }
            Body::Vector { id, content: old } => {
                content = self.seal_vector_content(id, sequence, kind, plain_content(&old)?, pending, random)?;
                Body::Vector { id, content: content.block() }
            }
            Body::Recall { id, mode, removal } => Body::Recall { id, mode, removal },
            Body::RecallAll { ids, mode, removal } => Body::RecallAll { ids, mode, removal },
            Body::Shared { id, space, space_id } => Body::Shared { id, space, space_id },
            // A space is never encrypted, and an agent's log holds no member record.
            Body::Commit { .. } | Body::Seal { .. } | Body::Member { .. } => {
                return Err(CopyError::Engine(Error::Internal { what: InternalRule::OnlyChainedRecordsCopied }))
            }
        };
        let copied = Record { identity, body, author: None };
        copied.encode(&mut pending.bytes);
        copied.encode_chained_fields(&mut pending.fields);
        pending.chain = chain_next(&pending.chain, &pending.fields);
        pending.sequence = sequence;
        pending.records += 1;
        pending.last_erase = erase_sequence(&copied).or(pending.last_erase);
        // A batch ends where the segment is full, so the copy's segments are as large as the
        // agent's own writes would have made them.
        let segment_full = self.log.write_offset() + pending.bytes.len() as u64 >= self.options.segment_size_max_bytes;
        if pending.bytes.len() >= COPY_BATCH_BYTES || segment_full {
            self.write_copied(pending)?;
        }
        Ok(())
    }

    /// The sealed content of lot or memory `id` whose plain bytes are `plain` (`None` once its
    /// content is gone: then it gets no secret, no slot and no sealed bytes).
    fn seal_node_content(
        &self,
        id: u64,
        sequence: u64,
        kind: u8,
        plain: Option<Vec<u8>>,
        pending: &mut PendingCopy,
        random: &mut RandomPool,
    ) -> Result<NewContent, Error> {
        let Some(plain) = plain else { return self.absent_content(random) };
        let sealing = self.sealing.as_ref().ok_or(Error::Internal { what: InternalRule::CopySealsWithNewKeys })?;
        let (epoch, epoch_key) =
            sealing.current_epoch().ok_or(Error::Internal { what: InternalRule::LiveEpochInForce })?;
        let salt: [u8; SALT_BYTES] = random.take(&self.storage, &self.folder)?;
        let secret: SecretKey = random.take(&self.storage, &self.folder)?;
        let nonce: Nonce = random.take(&self.storage, &self.folder)?;
        let parts = NodeSealing {
            secret: &secret,
            epoch: (epoch, &epoch_key),
            nonce: &nonce,
            recovery_associated: &recovery_associated_data(self.agent, id, epoch),
            content_associated: &content_associated_data(self.agent, id, sequence, kind),
        };
        let envelope = seal_node(&parts, &plain);
        pending.add_slot(id, &sealing.slot_bytes(id, &nonce, &secret));
        pending.secrets.push((id, secret));
        Ok(NewContent { digest: content_digest(&salt, &envelope), present: Some((salt, envelope)) })
    }

    /// The sealed numbers of a vector of node `id`, under its node's secret; absent when they
    /// are gone, or when the node has no secret (its own content is gone).
    fn seal_vector_content(
        &self,
        id: u64,
        sequence: u64,
        kind: u8,
        numbers: Option<&[u8]>,
        pending: &PendingCopy,
        random: &mut RandomPool,
    ) -> Result<NewContent, Error> {
        let sealing = self.sealing.as_ref().ok_or(Error::Internal { what: InternalRule::CopySealsWithNewKeys })?;
        let secret = match pending.secret_of(id) {
            Some(secret) => Some(secret),
            None => sealing.secret(id)?,
        };
        let (Some(numbers), Some(secret)) = (numbers, secret) else { return self.absent_content(random) };
        let salt: [u8; SALT_BYTES] = random.take(&self.storage, &self.folder)?;
        let nonce: Nonce = random.take(&self.storage, &self.folder)?;
        let envelope = seal_vector(&secret, &nonce, &content_associated_data(self.agent, id, sequence, kind), numbers);
        Ok(NewContent { digest: content_digest(&salt, &envelope), present: Some((salt, envelope)) })
    }

    /// A content that is gone: random bytes stand for its digest, which nothing can check
    /// (there is no salt and no content), so they tie the new record to nothing of the old one.
    fn absent_content(&self, random: &mut RandomPool) -> Result<NewContent, Error> {
        Ok(NewContent { digest: random.take(&self.storage, &self.folder)?, present: None })
    }

    /// Writes the records gathered in `pending` and their commit marker, with the key table
    /// slots of their secrets first (not synced: each record carries its secret under the epoch
    /// key, as every write of an encrypted agent does), syncs, and replays them into the graph.
    fn write_copied(&mut self, pending: &mut PendingCopy) -> Result<(), Error> {
        if pending.is_empty() {
            return Ok(());
        }
        limits::check(Limit::BatchBytes, pending.bytes.len(), BATCH_MAX_BYTES)?;
        let segment = self.active_segment();
        let start = self.log.write_offset();
        let identity = Identity { agent: self.agent, segment, sequence: pending.sequence };
        commit_marker(identity, start, &pending.bytes, pending.records, pending.chain).encode(&mut pending.bytes);
        let sealing = self.sealing.as_mut().ok_or(Error::Internal { what: InternalRule::CopySealsWithNewKeys })?;
        for (first_id, slots) in &pending.slots {
            sealing.write_slots(*first_id, slots)?;
        }
        self.write_durably(&pending.bytes)?;
        self.log.commit(pending.sequence, pending.chain);
        // What was just written is read back as open reads it: the graph learns it from the
        // bytes on their way to the disk, never from what the copy meant to write.
        let path = segment_path(&self.folder, segment);
        let mut position = 0usize;
        while let Some(rest) = pending.bytes.get(position..).filter(|rest| !rest.is_empty()) {
            let offset = start + position as u64;
            let (record, length) = record::decode(rest).map_err(|reason| Error::Corrupt {
                file: String::from(path.as_str()),
                offset,
                reason,
            })?;
            apply_record(&mut self.graph, self.space.as_mut(), &mut self.shared, &record, offset, &path)?;
            position += length;
        }
        self.last_erase_sequence_replayed = pending.last_erase.or(self.last_erase_sequence_replayed);
        pending.bytes.clear();
        pending.records = 0;
        pending.slots.clear();
        pending.secrets.clear();
        pending.last_erase = None;
        Ok(())
    }
}

/// Why one record could not be copied: damage in the source's record (placed by the caller, who
/// knows where it is), or an error of the engine.
enum CopyError {
    Source(CorruptReason),
    Engine(Error),
}

impl From<Error> for CopyError {
    fn from(error: Error) -> CopyError {
        CopyError::Engine(error)
    }
}

/// The text of a plaintext content, checked against its digest: `None` once it is gone.
fn plain_content<'a>(content: &ContentBlock<'a>) -> Result<Option<&'a [u8]>, CopyError> {
    if content.sealed {
        return Err(CopyError::Source(CorruptReason::SealedRecordInPlaintextAgent));
    }
    let Some((salt, text)) = content.present else { return Ok(None) };
    if !equal_in_constant_time(&content_digest(salt, text), &content.digest) {
        // Sealing it would give damaged text a fresh digest: the damage must stop the copy.
        return Err(CopyError::Source(CorruptReason::ContentDoesNotMatchDigest));
    }
    Ok(Some(text))
}
