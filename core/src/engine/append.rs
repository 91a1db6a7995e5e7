//! Durable writes: records, a commit marker, one sync; segment roll-over.

use alloc::vec;
use alloc::vec::Vec;

use super::active_log::PoisonCause;
use super::{io_error, AgentEngine};
use crate::codec::recalled_ids::RecalledIds;
use crate::codec::record::{commit_marker, Body, ContentBlock, Identity, LegsView, Record, TrackedView, SALT_BYTES};
use crate::convert::{bounded_count_u32, field_length_u16};
use crate::digest::{chain_next, content_digest};
use crate::error::Error;
use crate::error_facts::{InternalRule, Limit, NameProblem, StorageOperation};
use crate::graph::Location;
use crate::id::{Id, Leg, Mode, Removal};
use crate::limits::{
    self, BATCH_MAX_BYTES, CONTENT_MAX_BYTES, LABEL_MAX_BYTES, LEGS_PER_MEMORY_MAX, NODES_PER_AGENT_MAX,
    PARENTS_PER_LEG_MAX, SEGMENTS_PER_AGENT_MAX,
};
use crate::log::names::segment_path;
use crate::storage::Storage;

/// Random bytes each entry of an encrypted agent's write takes: salt, secret, nonce.
pub(super) const SEALED_RANDOM_BYTES: usize = SALT_BYTES + crate::seal::KEY_BYTES + crate::seal::NONCE_BYTES;

/// One record to write, borrowed from the caller.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry<'a> {
    Lot {
        label: &'a str,
        content: &'a [u8],
    },
    Memory {
        legs: &'a [Leg],
        /// The parents among `legs` that came from read tracking (empty without it).
        tracked: &'a [Id],
        content: &'a [u8],
    },
    Recall {
        id: u64,
        mode: Mode,
        removal: Removal,
    },
    /// The recall of several ids at once, in one record.
    RecallAll {
        ids: RecalledIds<'a>,
        mode: Mode,
        removal: Removal,
    },
    /// A vector of the alive node `id`: its numbers as the record stores them.
    Vector {
        id: u64,
        numbers: &'a [u8],
    },
    /// A space's member `agent` is given `role`.
    Member {
        agent: u64,
        role: crate::role::Role,
    },
    /// A node standing for node `space_id` of space `space`.
    Shared {
        space: u64,
        space_id: u64,
    },
}

/// Checks a lot's label and content against the limits.
pub(crate) fn validate_lot(label: &str, content: &[u8]) -> Result<(), Error> {
    if label.is_empty() {
        return Err(Error::InvalidName { reason: NameProblem::LotLabelEmpty });
    }
    limits::check(Limit::LabelBytes, label.len(), LABEL_MAX_BYTES)?;
    limits::check(Limit::ContentBytes, content.len(), CONTENT_MAX_BYTES)
}

fn content_block<'a>(salt: &'a [u8; SALT_BYTES], content: &'a [u8]) -> ContentBlock<'a> {
    ContentBlock {
        digest: content_digest(salt, content),
        present: Some((salt, content)),
        erased_padding_bytes: 0,
        sealed: false,
    }
}

/// The content block of an entry: `sealed`, its envelope, for an encrypted agent, else `plain`.
fn block_of<'a>(salt: &'a [u8; SALT_BYTES], sealed: Option<&'a [u8]>, plain: &'a [u8]) -> ContentBlock<'a> {
    match sealed {
        Some(envelope) => sealed_content_block(salt, envelope),
        None => content_block(salt, plain),
    }
}

/// The content block of a sealed record: the digest, like a plaintext one's, is of the bytes
/// stored, so the chain commits to the envelope and a check without the token covers it.
fn sealed_content_block<'a>(salt: &'a [u8; SALT_BYTES], envelope: &'a [u8]) -> ContentBlock<'a> {
    ContentBlock { sealed: true, ..content_block(salt, envelope) }
}

impl<S: Storage> AgentEngine<S> {
    /// Checks a memory's legs: at least one, none empty, within the limits, and every parent
    /// alive, or one of the `pending` ids a batch is about to write.
    pub(crate) fn validate_memory(
        &self,
        content: &[u8],
        legs: &[Leg],
        pending: core::ops::Range<u64>,
    ) -> Result<(), Error> {
        limits::check(Limit::ContentBytes, content.len(), CONTENT_MAX_BYTES)?;
        if legs.is_empty() {
            return Err(Error::NoLegs);
        }
        limits::check(Limit::LegsPerMemory, legs.len(), LEGS_PER_MEMORY_MAX)?;
        for (leg_index, leg) in legs.iter().enumerate() {
            if leg.is_empty() {
                return Err(Error::EmptyLeg { leg_index });
            }
            limits::check(Limit::ParentsPerLeg, leg.parents().len(), PARENTS_PER_LEG_MAX)?;
            for parent in leg.parents() {
                if !pending.contains(&parent.get()) {
                    self.graph.check_parent(parent.get())?;
                }
            }
        }
        Ok(())
    }

    /// Checks that `count` more nodes fit in the agent.
    pub(crate) fn validate_room(&self, count: u64) -> Result<(), Error> {
        let total = self.graph.len().saturating_add(count);
        if total > NODES_PER_AGENT_MAX {
            return Err(Error::LimitExceeded { what: Limit::NodesPerAgent, size: total, limit: NODES_PER_AGENT_MAX });
        }
        Ok(())
    }

    /// Adds a source.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - `Error::InvalidName` for an empty label; `Error::LimitExceeded` when the label, the
    ///   content or the agent's nodes or segments would pass their limit. Nothing is written.
    /// - `Error::OutcomeUnknown` when its write or sync failed: it may be stored, and the engine
    ///   is poisoned. `Error::Io` when the storage failed before any of its bytes were written.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.check_writable()?;
        validate_lot(label, content)?;
        self.validate_room(1)?;
        let ids = self.write_entries(&[Entry::Lot { label, content }])?;
        ids.first().copied().ok_or(Error::Internal { what: InternalRule::WrittenEntryHasId })
    }

    /// Adds a memory learned through `legs`.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - `Error::NoLegs`, `Error::EmptyLeg`, `Error::UnknownId` or `Error::DeadParent` for a bad
    ///   leg or parent; `Error::LimitExceeded` past a limit. Nothing is written.
    /// - `Error::OutcomeUnknown` when its write or sync failed: it may be stored, and the engine
    ///   is poisoned. `Error::Io` when the storage failed before any of its bytes were written.
    pub fn remember(&mut self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.check_writable()?;
        self.validate_memory(content, legs, 0..0)?;
        self.validate_room(1)?;
        let ids = self.write_entries(&[Entry::Memory { legs, tracked: &[], content }])?;
        ids.first().copied().ok_or(Error::Internal { what: InternalRule::WrittenEntryHasId })
    }

    /// Writes validated lots and memories durably, then adds them to the graph.
    pub(crate) fn write_entries(&mut self, entries: &[Entry<'_>]) -> Result<Vec<Id>, Error> {
        let locations = self.append(entries)?;
        let mut ids = Vec::with_capacity(entries.len());
        for (index, (entry, location)) in entries.iter().zip(locations).enumerate() {
            let id = match entry {
                Entry::Lot { .. } => self.graph.add_lot(location, true)?,
                Entry::Memory { legs, .. } => {
                    let parents = legs.iter().map(|leg| leg.parents().iter().map(|parent| parent.get()));
                    self.graph.add_memory(parents, location, true)?
                }
                Entry::Vector { id, .. } => {
                    self.graph.set_vector_on_disk(*id, true);
                    self.index_written(*id, entry, location);
                    continue;
                }
                Entry::Member { agent, role } => {
                    if let Some(space) = self.space.as_mut() {
                        space.set_role(*agent, *role);
                    }
                    continue;
                }
                Entry::Shared { space, space_id } => {
                    let id = self.graph.add_shared(location)?;
                    self.shared.note(*space, *space_id, id);
                    id
                }
                Entry::Recall { .. } | Entry::RecallAll { .. } => continue,
            };
            if let (Some(author), Some(space)) = (self.author_of_entry(index), self.space.as_mut()) {
                space.note_author(author);
            }
            self.index_written(id, entry, location);
            ids.push(Id::from(id));
        }
        Ok(ids)
    }

    /// Writes `entries` and a commit marker to the active segment and syncs it; returns where
    /// each record went. A failed write or sync poisons the engine.
    pub(crate) fn append(&mut self, entries: &[Entry<'_>]) -> Result<Vec<Location>, Error> {
        self.check_writable()?;
        if self.log.write_offset() >= self.options.segment_size_max_bytes {
            self.roll()?;
        }
        let segment = self.active_segment();
        let random_bytes = if self.sealing.is_some() { SEALED_RANDOM_BYTES } else { SALT_BYTES };
        let mut random = vec![0u8; random_bytes * entries.len()];
        self.storage
            .fill_random(&mut random)
            .map_err(|error| io_error(StorageOperation::DrawingRandomBytes, &self.folder, error))?;
        let mut bytes = Vec::new();
        let mut locations = Vec::with_capacity(entries.len());
        let mut sequence = self.log.sequence();
        let mut chain = self.log.chain();
        let mut next_id = self.graph.next_id();
        let sealed = self.seal_entries(entries, &random, sequence + 1, next_id)?;
        let mut fields = Vec::new();
        let mut legs_raw = Vec::new();
        let mut tracked_raw = Vec::new();
        for (index, (entry, chunk)) in entries.iter().zip(random.chunks_exact(random_bytes)).enumerate() {
            sequence += 1;
            let identity = Identity { agent: self.agent, segment, sequence };
            let salt: &[u8; SALT_BYTES] = chunk
                .get(..SALT_BYTES)
                .and_then(|salt| salt.try_into().ok())
                .ok_or(Error::Internal { what: InternalRule::RandomBytesStartWithSalt })?;
            let sealed_content = sealed.as_ref().and_then(|sealed| sealed.contents.get(index));
            // An encrypted agent's record holds the envelope, and a lot's label only inside it.
            let block = |plain| block_of(salt, sealed_content.map(Vec::as_slice), plain);
            let body = match *entry {
                Entry::Lot { label, content } => {
                    next_id += 1;
                    let label = if sealed_content.is_some() { "" } else { label };
                    Body::Lot { id: next_id - 1, label, content: block(content) }
                }
                Entry::Memory { legs, tracked, content } => {
                    next_id += 1;
                    legs_raw.clear();
                    let parents: Vec<Vec<u64>> =
                        legs.iter().map(|leg| leg.parents().iter().map(|parent| parent.get()).collect()).collect();
                    LegsView::encode(&parents, &mut legs_raw);
                    let view =
                        LegsView::parse(field_length_u16(legs.len()), &legs_raw).ok_or(Error::LimitExceeded {
                            what: Limit::LegsPerMemory,
                            size: legs.len() as u64,
                            limit: LEGS_PER_MEMORY_MAX as u64,
                        })?;
                    tracked_raw.clear();
                    let tracked_ids: Vec<u64> = tracked.iter().map(|id| id.get()).collect();
                    TrackedView::encode(&tracked_ids, &mut tracked_raw);
                    let tracked = TrackedView::parse(field_length_u16(tracked.len()), &tracked_raw).ok_or(
                        Error::LimitExceeded {
                            what: Limit::TrackedParentsPerMemory,
                            size: tracked.len() as u64,
                            limit: PARENTS_PER_LEG_MAX as u64,
                        },
                    )?;
                    Body::Memory { id: next_id - 1, legs: view, tracked, content: block(content) }
                }
                Entry::Recall { id, mode, removal } => Body::Recall { id, mode, removal },
                Entry::RecallAll { ids, mode, removal } => Body::RecallAll { ids, mode, removal },
                Entry::Vector { id, numbers } => Body::Vector { id, content: block(numbers) },
                Entry::Member { agent, role } => Body::Member { agent, role },
                Entry::Shared { space, space_id } => {
                    next_id += 1;
                    Body::Shared { id: next_id - 1, space, space_id }
                }
            };
            let record = Record { identity, body, author: self.author_of_entry(index) };
            let offset = self.log.write_offset() + bytes.len() as u64;
            locations.push(Location::in_segment(segment, offset)?);
            record.encode(&mut bytes);
            record.encode_chained_fields(&mut fields);
            chain = chain_next(&chain, &fields);
        }
        limits::check(Limit::BatchBytes, bytes.len(), BATCH_MAX_BYTES)?;
        let identity = Identity { agent: self.agent, segment, sequence };
        commit_marker(identity, self.log.write_offset(), &bytes, bounded_count_u32(entries.len())?, chain)
            .encode(&mut bytes);
        if let (Some(sealing), Some(sealed)) = (self.sealing.as_mut(), sealed.as_ref()) {
            // Not synced: the records carry the same secrets under the epoch key, and open
            // writes a slot lost in a crash again from them.
            sealing.write_slots(sealed.first_id, &sealed.slots)?;
        }
        self.write_durably(&bytes)?;
        self.log.commit(sequence, chain);
        Ok(locations)
    }

    /// Writes `bytes` at the end of the active segment and syncs, through the active log's one
    /// durable append, which poisons the engine on failure.
    pub(super) fn write_durably(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let active = self.active_segment();
        let folder = &self.folder;
        let Some(file) = self.segments.active_mut() else {
            return Err(Error::Internal { what: InternalRule::ActiveSegmentOpenWhileInUse });
        };
        self.log.append_durably(file, bytes, self.options.preallocate_bytes, || segment_path(folder, active))?;
        self.bytes_since_snapshot += bytes.len() as u64;
        Ok(())
    }

    /// Cuts the zeros written ahead off a segment that was just sealed.
    fn trim_sealed_segment(&mut self) -> Result<(), Error> {
        let path = segment_path(&self.folder, self.active_segment());
        let Some(file) = self.segments.active_mut() else { return Ok(()) };
        self.log.trim_sealed(file, &path)
    }

    /// Starts the next segment, then seals the active one (a seal record and its commit,
    /// synced). The next segment is durable, header and folder entry, before the seal is
    /// written, so a seal always proves its next segment existed: open takes a seal without it
    /// for lost records. A crash between the two leaves an unsealed segment followed by one
    /// holding only its header, which open removes.
    ///
    /// A failure is never the outcome of the caller's records, which were not written yet: it
    /// is a refusal, and the engine is poisoned, since the seal may be on disk.
    pub(super) fn roll(&mut self) -> Result<(), Error> {
        let segment = self.active_segment();
        if segment >= SEGMENTS_PER_AGENT_MAX {
            return Err(Error::LimitExceeded {
                what: Limit::SegmentsPerAgent,
                size: segment + 1,
                limit: SEGMENTS_PER_AGENT_MAX,
            });
        }
        let rolled = self.create_segment_file(segment + 1).and_then(|next| {
            let identity = Identity { agent: self.agent, segment, sequence: self.log.sequence() };
            let mut bytes = Vec::new();
            Record { identity, body: Body::Seal { next_segment: segment + 1 }, author: None }.encode(&mut bytes);
            commit_marker(identity, self.log.write_offset(), &bytes, 1, self.log.chain()).encode(&mut bytes);
            self.write_durably(&bytes).map_err(refusal_of_caller_write)?;
            self.trim_sealed_segment()?;
            Ok(next)
        });
        match rolled {
            Ok(started) => self.make_active(started),
            Err(error) => {
                self.log.poison(PoisonCause::FailedRoll);
                return Err(error);
            }
        }
        self.snapshot_if_due();
        Ok(())
    }
}

/// The error of a roll, for the caller whose write triggered it: that write was not made, so
/// what might be on disk (the seal) is no outcome of it.
fn refusal_of_caller_write(error: Error) -> Error {
    match error {
        Error::OutcomeUnknown { operation, path, kind, source } => Error::Io { operation, path, kind, source },
        other => other,
    }
}
