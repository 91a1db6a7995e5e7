//! Several lots, memories and vectors written together: one commit marker, one sync, all or
//! nothing.

use alloc::string::String;
use alloc::vec::Vec;

use super::append::{validate_lot, Entry};
use super::read_tracking::{add_reads, TrackedLegs};
use super::search::{vector_bytes, vector_dimension};
use super::AgentEngine;
use crate::digest::Hash;
use crate::error::Error;
use crate::error::VectorProblem;
use crate::error_facts::{InternalRule, Limit};
use crate::id::{Id, Leg};
use crate::limits::{self, BATCH_MAX_BYTES, BATCH_MAX_RECORDS};
use crate::read_set::ReadSet;
use crate::search::VectorIndex;
use crate::storage::Storage;

/// One write collected by a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// A source.
    Lot {
        /// Its label.
        label: String,
        /// Its content.
        content: Vec<u8>,
    },
    /// A memory.
    Memory {
        /// Its content.
        content: Vec<u8>,
        /// Its legs (with the read set added, for a memory remembered with read tracking).
        legs: Vec<Leg>,
        /// The parents in every leg that came from read tracking, ascending (empty without it).
        tracked: Vec<Id>,
    },
    /// A vector attached to a lot or memory (alive, or added earlier in the same batch).
    Vector {
        /// The lot or memory.
        id: Id,
        /// The vector's numbers, as the record stores them (little-endian f32).
        numbers: Vec<u8>,
    },
}

/// The writes of a batch that stays open between calls, for callers that cannot hand the
/// engine one closure (a binding to another language, say): each step runs on a [`Batch`]
/// holding the writes staged so far ([`AgentEngine::stage`]), and
/// [`AgentEngine::commit_staged`] writes them all with one sync. Dropping it writes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StagedBatch {
    writes: Vec<Write>,
    size_bytes: usize,
    node_count: u64,
    /// The agent's next id when the first write was staged: the ids handed out count from it.
    first_id: Option<u64>,
    /// The chain hash of the agent's last record at the latest step: it names both the agent
    /// and how far its log went, so an unchanged chain means nothing reached it since.
    chain: Hash,
    /// Whether a record reached the agent between two steps (a recall, say), so the commit
    /// must check every write again; otherwise the checks of the steps still hold.
    revalidate: bool,
}

impl StagedBatch {
    /// How many writes are staged.
    #[must_use]
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether nothing is staged.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}

/// Collects writes that commit together. Ids handed out are final; a memory may name a lot or
/// memory added earlier in the same batch.
pub struct Batch<'e, S: Storage> {
    engine: &'e AgentEngine<S>,
    writes: Vec<Write>,
    size_bytes: usize,
    /// Lots and memories among `writes`, kept as they are pushed so an id costs no recount.
    node_count: u64,
}

impl<'e, S: Storage> Batch<'e, S> {
    fn next_id(&self) -> u64 {
        self.engine.graph.next_id() + self.node_count
    }

    /// Checks `write` against the agent and the writes collected so far, then collects it;
    /// returns the id a lot or memory will have. The one door into a batch, so a staged batch
    /// replayed at its commit passes exactly the checks its steps passed.
    fn push(&mut self, write: Write) -> Result<Option<Id>, Error> {
        let first_pending = self.engine.graph.next_id();
        let content_bytes = match &write {
            Write::Lot { label, content } => {
                validate_lot(label, content)?;
                label.len() + content.len()
            }
            Write::Memory { content, legs, tracked } => {
                self.engine.validate_memory(content, legs, first_pending..self.next_id())?;
                let legs_bytes = legs.iter().map(|leg| leg.parents().len() * 8 + 2).sum::<usize>();
                content.len() + legs_bytes + tracked.len() * 8 + 2
            }
            Write::Vector { id, numbers } => {
                self.check_vector_target(*id)?;
                numbers.len()
            }
        };
        limits::check(Limit::RecordsPerBatch, self.writes.len() + 1, BATCH_MAX_RECORDS)?;
        limits::check(Limit::BatchBytes, self.size_bytes + content_bytes, BATCH_MAX_BYTES)?;
        let id = match write {
            Write::Vector { .. } => None,
            Write::Lot { .. } | Write::Memory { .. } => {
                self.engine.validate_room(self.next_id() - first_pending + 1)?;
                Some(Id::from(self.next_id()))
            }
        };
        self.size_bytes += content_bytes;
        self.node_count += u64::from(id.is_some());
        self.writes.push(write);
        Ok(id)
    }

    /// Checks that `id` is alive or added earlier in this batch.
    fn check_vector_target(&self, id: Id) -> Result<(), Error> {
        if (self.engine.graph.next_id()..self.next_id()).contains(&id.get()) {
            return Ok(());
        }
        self.engine.check_alive(id.get())
    }

    /// Collects a write that names a lot or memory, which always gets an id.
    fn push_node(&mut self, write: Write) -> Result<Id, Error> {
        self.push(write)?.ok_or(Error::Internal { what: InternalRule::CollectedWriteHasId })
    }

    /// Adds a source to the batch; same checks as `AgentEngine::add_lot`.
    ///
    /// # Errors
    ///
    /// `Error::InvalidName` for an empty label; `Error::LimitExceeded` when the label, the
    /// content, the batch or the agent's nodes would pass their limit. The batch is unchanged.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.push_node(Write::Lot { label: String::from(label), content: content.to_vec() })
    }

    /// Adds a memory to the batch; same checks as `AgentEngine::remember`.
    ///
    /// # Errors
    ///
    /// `Error::NoLegs`, `Error::EmptyLeg`, `Error::UnknownId` or `Error::DeadParent` for a bad
    /// leg or parent (one added earlier in the batch counts as alive); `Error::LimitExceeded`
    /// past a limit. The batch is unchanged.
    pub fn remember(&mut self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.push_node(Write::Memory { content: content.to_vec(), legs: legs.to_vec(), tracked: Vec::new() })
    }

    /// Adds a memory learned through `legs` and through everything in `reads` to the batch;
    /// same checks and effect as `AgentEngine::remember_tracked`. A staged batch checks it again
    /// at its commit, so a read id recalled in between is refused then.
    ///
    /// # Errors
    ///
    /// As [`Batch::remember`], and `Error::LimitExceeded` when the read set, or a leg with it
    /// added, holds more parents than a leg may have. The batch is unchanged.
    pub fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        let TrackedLegs { legs, tracked } = add_reads(legs, reads)?;
        self.push_node(Write::Memory { content: content.to_vec(), legs, tracked })
    }

    /// Attaches `vector` to the lot or memory `id`, alive or added earlier in this batch,
    /// replacing any vector it had; same checks as `AgentEngine::set_vector`, the dimension
    /// checked when the batch is written.
    ///
    /// # Errors
    ///
    /// `Error::UnknownId` or `Error::AlreadyRecalled` for an id that is neither alive nor added
    /// earlier in the batch; `Error::InvalidVector` for an empty vector, one with a number that
    /// is not finite, or all zeros; `Error::LimitExceeded` for one longer than
    /// `limits::VECTOR_DIMENSION_MAX` or a batch past its limits.
    pub fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        // The id is checked before the numbers, as `AgentEngine::set_vector` does.
        self.check_vector_target(id)?;
        VectorIndex::default().check(vector)?;
        self.push(Write::Vector { id, numbers: vector_bytes(vector) }).map(|_| ())
    }

    /// How many writes were collected.
    #[must_use]
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether nothing was collected.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}

impl<S: Storage> AgentEngine<S> {
    /// Runs `collect`, then writes everything it added with one commit marker and one sync. If
    /// `collect` fails, nothing is written.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - The error `collect` returns, or `Error::LimitExceeded` when the batch as written is too
    ///   large: nothing is written.
    /// - `Error::OutcomeUnknown` when its write or sync failed: it may be stored, and the engine
    ///   is poisoned. `Error::Io` when the storage failed before any of its bytes were written.
    pub fn batch<T>(&mut self, collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>) -> Result<T, Error> {
        self.batch_then(collect, |engine, writes, _| engine.write_batch(writes))
    }

    /// [`AgentEngine::batch`], with the checked writes written by `write`, which also gets
    /// what `collect` returned.
    pub(crate) fn batch_then<T>(
        &mut self,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
        write: impl FnOnce(&mut AgentEngine<S>, &[Write], &mut T) -> Result<Vec<Id>, Error>,
    ) -> Result<T, Error> {
        self.check_writable()?;
        let (value, writes) = {
            let mut batch = Batch { engine: self, writes: Vec::new(), size_bytes: 0, node_count: 0 };
            let value = collect(&mut batch)?;
            (value, batch.writes)
        };
        let mut value = value;
        self.check_batch_vectors(&writes)?;
        write(self, &writes, &mut value)?;
        Ok(value)
    }

    /// Runs one step of a staged batch: `collect` works on a batch holding the writes of
    /// `staged`, with the checks of [`AgentEngine::batch`]; what it adds stays staged, even
    /// when it then fails. The ids it hands out are final as long as nothing else writes to
    /// the agent before [`AgentEngine::commit_staged`].
    ///
    /// # Errors
    ///
    /// - `Error::BatchConflict` when another write reached the agent since the first step:
    ///   nothing is added, and the staged batch can only be dropped.
    /// - `Error::AgentDeleted`, `Error::Poisoned`, `Error::ReadOnly` as for any write.
    /// - The error `collect` returns.
    pub fn stage<T>(
        &self,
        staged: &mut StagedBatch,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.check_writable()?;
        let next_id = self.graph.next_id();
        if staged.first_id.is_some_and(|first_id| first_id != next_id) {
            return Err(Error::BatchConflict);
        }
        let mut batch = Batch {
            engine: self,
            writes: core::mem::take(&mut staged.writes),
            size_bytes: staged.size_bytes,
            node_count: staged.node_count,
        };
        let outcome = collect(&mut batch);
        let chain = self.log.chain();
        staged.revalidate |= !batch.writes.is_empty() && staged.chain != chain && staged.first_id.is_some();
        staged.chain = chain;
        staged.writes = batch.writes;
        staged.size_bytes = batch.size_bytes;
        staged.node_count = batch.node_count;
        staged.first_id = (!staged.writes.is_empty()).then_some(next_id);
        outcome
    }

    /// Writes a staged batch with one commit marker and one sync, after checking every write
    /// again against the agent as it is now (a recall since a step may have killed a parent).
    ///
    /// # Errors
    ///
    /// `Error::BatchConflict` when another write reached the agent since the first step; the
    /// check that a write no longer passes (`Error::DeadParent`, say); otherwise as
    /// [`AgentEngine::batch`]. Nothing is written unless it returns `Ok`.
    pub fn commit_staged(&mut self, staged: StagedBatch) -> Result<(), Error> {
        if staged.first_id.is_some_and(|first_id| first_id != self.graph.next_id()) {
            return Err(Error::BatchConflict);
        }
        if staged.revalidate || staged.chain != self.log.chain() {
            return self.batch(|batch| staged.writes.into_iter().try_for_each(|write| batch.push(write).map(|_| ())));
        }
        // Nothing reached the agent since the steps checked the writes: they hold as checked.
        self.check_writable()?;
        self.check_batch_vectors(&staged.writes)?;
        self.write_batch(&staged.writes).map(|_| ())
    }

    /// Checks that the vectors of a batch share the dimension of the agent's alive vectors
    /// (or, if it has none, of the batch's first vector).
    fn check_batch_vectors(&mut self, writes: &[Write]) -> Result<(), Error> {
        let mut dimensions = writes.iter().filter_map(|write| match write {
            Write::Vector { numbers, .. } => Some(vector_dimension(numbers)),
            Write::Lot { .. } | Write::Memory { .. } => None,
        });
        let Some(first) = dimensions.next() else { return Ok(()) };
        let mut expected = self.search_index()?.vector_dimension();
        for found in core::iter::once(first).chain(dimensions) {
            match expected {
                Some(expected) if expected != found => {
                    return Err(Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected, found } });
                }
                _ => expected = Some(found),
            }
        }
        Ok(())
    }

    /// Writes already validated writes as one durable write; returns their ids.
    pub(crate) fn write_batch(&mut self, writes: &[Write]) -> Result<Vec<Id>, Error> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let entries: Vec<Entry<'_>> = writes
            .iter()
            .map(|write| match write {
                Write::Lot { label, content } => Entry::Lot { label, content },
                Write::Memory { content, legs, tracked } => Entry::Memory { legs, tracked, content },
                Write::Vector { id, numbers } => Entry::Vector { id: id.get(), numbers },
            })
            .collect();
        self.write_entries(&entries)
    }
}
