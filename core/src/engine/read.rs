//! Reading back: one node from its record on disk, and the full verification of the log.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{io_error, AgentEngine};
use crate::codec::key_table_file::key_slot_offset;
use crate::codec::record::{self, Body, HEADER_BYTES};
use crate::corrupt_reason::CorruptReason;
use crate::digest::{content_digest, equal_in_constant_time};
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::fingerprint::Fingerprint;
use crate::id::{Id, Leg};
use crate::log::names::segment_path;
use crate::node::{Node, NodeKind};
use crate::seal::envelope::split_lot_plain_bytes;
use crate::seal::open_sealed;
use crate::storage::{Storage, StorageFile};

impl<S: Storage> AgentEngine<S> {
    /// The lot or memory `id`, read from its record on disk and checked against its digest.
    /// A recalled node's content is withheld (`None`), whether its text is still in the files
    /// (Untrusted, until compaction) or not: a recall hides. [`AgentEngine::audit`] reads it.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::audit`].
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        let mut node = self.audit(id)?;
        if !node.alive {
            node.content = None;
        }
        Ok(node)
    }

    /// Like [`AgentEngine::get`], but returns the content of a recalled node while its text is
    /// still in the files (an Untrusted recall, before compaction): for a person auditing what
    /// was recalled, never for what a model reads.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted.
    /// - `Error::UnknownId` when no lot or memory has `id`.
    /// - `Error::Corrupt` when its record fails a check; `Error::Io` when it cannot be read.
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        self.check_readable()?;
        let location = self.graph.location(id.get())?;
        let segment = u64::from(location.segment);
        let path = segment_path(&self.folder, segment);
        let offset = u64::from(location.offset);
        let corrupt = |reason| Error::Corrupt { file: path.clone(), offset, reason };
        let bytes = self.with_segment(segment, &path, |file, path| {
            let mut header = [0u8; HEADER_BYTES];
            file.read_at(offset, &mut header).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
            let length = record::claimed_length(&header).ok_or(corrupt(CorruptReason::RecordCutShort))? as usize;
            if length > record::RECORD_MAX_BYTES {
                return Err(corrupt(CorruptReason::ImpossibleRecordLength));
            }
            let mut bytes = vec![0u8; length];
            file.read_at(offset, &mut bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
            Ok(bytes)
        })?;
        let (record, _) = record::decode(&bytes).map_err(&corrupt)?;
        if record.identity.agent != self.agent || record.identity.segment != segment {
            return Err(corrupt(CorruptReason::RecordBelongsElsewhere));
        }
        let (record_id, kind, tracked, content) = match record.body {
            Body::Lot { id, label, content } => (id, NodeKind::Lot { label: String::from(label) }, Vec::new(), content),
            Body::Memory { id, legs, tracked, content } => {
                let legs = legs.iter().map(|leg| leg.map(Id::from).collect::<Leg>()).collect();
                (id, NodeKind::Memory { legs }, tracked.iter().map(Id::from).collect(), content)
            }
            Body::Shared { id: record_id, space, space_id } => {
                if record_id != id.get() {
                    return Err(corrupt(CorruptReason::RecordHoldsAnotherId));
                }
                let kind = NodeKind::Shared { space, id: Id::from(space_id) };
                return Ok(Node { id, kind, alive: self.graph.is_alive(id.get()), content: None, tracked: Vec::new() });
            }
            _ => return Err(corrupt(CorruptReason::RecordNotLotOrMemory)),
        };
        if record_id != id.get() {
            return Err(corrupt(CorruptReason::RecordHoldsAnotherId));
        }
        let on_disk = self.graph.is_content_on_disk(id.get());
        let content = match content.present {
            // An encrypted node whose keys an Erase destroyed: its sealed bytes are noise.
            Some(_) if content.sealed && !on_disk => None,
            // The graph knows this text was erased: a record that holds it again is a stale
            // copy (a write the disk acknowledged and lost), never something to serve.
            Some(_) if !on_disk => {
                return Err(corrupt(CorruptReason::ErasedContentBackOnDisk));
            }
            Some((salt, bytes)) => {
                if !equal_in_constant_time(&content_digest(salt, bytes), &content.digest) {
                    return Err(corrupt(CorruptReason::ContentDoesNotMatchDigest));
                }
                if content.sealed {
                    self.open_sealed_content(&record, id.get(), bytes, offset, &path)?
                } else {
                    Some(bytes.to_vec())
                }
            }
            None => None,
        };
        let (kind, content) = match (kind, content) {
            // A sealed lot's label is inside its sealed bytes; once its keys are gone, so is it.
            (NodeKind::Lot { .. }, Some(plain)) if record.content().is_some_and(|block| block.sealed) => {
                let (label, text) =
                    split_lot_plain_bytes(&plain).ok_or(corrupt(CorruptReason::SealedContentMalformed))?;
                (NodeKind::Lot { label: String::from(label) }, Some(text.to_vec()))
            }
            other => other,
        };
        Ok(Node { id, kind, alive: self.graph.is_alive(id.get()), content, tracked })
    }

    /// The plain bytes sealed in `record`, the record of node `id` at `offset` of `path` whose
    /// content bytes are `sealed`: `None` when an Erase covers the node and its key is gone
    /// already (an Erase cut short after destroying it: the next open finishes the rest).
    fn open_sealed_content(
        &self,
        record: &record::Record<'_>,
        id: u64,
        sealed: &[u8],
        offset: u64,
        path: &str,
    ) -> Result<Option<Vec<u8>>, Error> {
        let sealing = self.sealing.as_ref().ok_or(Error::Corrupt {
            file: String::from(path),
            offset,
            reason: CorruptReason::SealedRecordInPlaintextAgent,
        })?;
        let Some(secret) = sealing.secret(id)? else {
            if self.graph.is_erase_requested(id) {
                return Ok(None);
            }
            return Err(Error::Corrupt {
                file: String::from(sealing.key_table_path()),
                offset: key_slot_offset(id).unwrap_or(0),
                reason: CorruptReason::KeyMissingForReadableNode,
            });
        };
        open_sealed(record, id, &secret, sealed).map(Some).map_err(|reason| Error::Corrupt {
            file: String::from(path),
            offset,
            reason,
        })
    }

    /// Re-reads every record of every segment, checks checksums, the digest of every content
    /// still present, the chain and every commit marker, and returns the head fingerprint.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted.
    /// - `Error::Corrupt` for the first damage in log order; `Error::Io` when a segment cannot
    ///   be read.
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        self.verify_in_order(None)
    }

    /// Like [`AgentEngine::verify`], and also checks that the history still passes through
    /// `kept`, a fingerprint saved earlier: a history cut or rewritten below it fails with
    /// `HistoryMismatch`.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::verify`], and `Error::HistoryMismatch` when the history does not pass
    /// through `kept`.
    pub fn verify_extends(&self, kept: &Fingerprint) -> Result<Fingerprint, Error> {
        self.verify_in_order(Some(kept))
    }

    /// The head fingerprint as of the last committed write, without re-reading anything.
    #[must_use]
    pub fn head(&self) -> Fingerprint {
        Fingerprint { records: self.log.sequence(), chain: self.log.chain() }
    }

    /// The legs of `id` as the graph holds them (empty for a lot).
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` when no lot or memory has `id`.
    pub fn legs(&self, id: Id) -> Result<Vec<Leg>, Error> {
        let legs = self.graph.legs(id.get())?;
        Ok(legs.into_iter().map(|leg| leg.into_iter().map(Id::from).collect()).collect())
    }
}
