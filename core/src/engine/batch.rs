//! Several lots, memories and vectors written together: one commit marker, one sync, all or
//! nothing.

use alloc::string::String;
use alloc::vec::Vec;

use super::append::{validate_lot, Entry};
use super::search::{vector_bytes, vector_dimension};
use super::AgentEngine;
use crate::error::Error;
use crate::error::VectorProblem;
use crate::id::{Id, Leg};
use crate::limits::{self, BATCH_MAX_BYTES, BATCH_MAX_RECORDS};
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
        /// Its legs.
        legs: Vec<Leg>,
    },
    /// A vector attached to a lot or memory (alive, or added earlier in the same batch).
    Vector {
        /// The lot or memory.
        id: Id,
        /// The vector's numbers, as the record stores them (little-endian f32).
        numbers: Vec<u8>,
    },
}

/// Collects writes that commit together. Ids handed out are final; a memory may name a lot or
/// memory added earlier in the same batch.
pub struct Batch<'e, S: Storage> {
    engine: &'e AgentEngine<S>,
    writes: Vec<Write>,
    size_bytes: usize,
}

impl<'e, S: Storage> Batch<'e, S> {
    fn next_id(&self) -> u64 {
        let nodes = self.writes.iter().filter(|write| !matches!(write, Write::Vector { .. })).count();
        self.engine.graph.next_id() + nodes as u64
    }

    fn admit(&mut self, write: Write, content_bytes: usize) -> Result<Id, Error> {
        limits::check("records in one batch", self.writes.len() + 1, BATCH_MAX_RECORDS)?;
        limits::check("batch size in bytes", self.size_bytes + content_bytes, BATCH_MAX_BYTES)?;
        self.engine.validate_room(self.next_id() - self.engine.graph.next_id() + 1)?;
        let id = Id::from(self.next_id());
        self.size_bytes += content_bytes;
        self.writes.push(write);
        Ok(id)
    }

    /// Adds a source to the batch; same checks as `AgentEngine::add_lot`.
    ///
    /// # Errors
    ///
    /// `Error::InvalidName` for an empty label; `Error::LimitExceeded` when the label, the
    /// content, the batch or the agent's nodes would pass their limit. The batch is unchanged.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        validate_lot(label, content)?;
        let write = Write::Lot { label: String::from(label), content: content.to_vec() };
        self.admit(write, label.len() + content.len())
    }

    /// Adds a memory to the batch; same checks as `AgentEngine::remember`.
    ///
    /// # Errors
    ///
    /// `Error::NoLegs`, `Error::EmptyLeg`, `Error::UnknownId` or `Error::DeadParent` for a bad
    /// leg or parent (one added earlier in the batch counts as alive); `Error::LimitExceeded`
    /// past a limit. The batch is unchanged.
    pub fn remember(&mut self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        let first_pending = self.engine.graph.next_id();
        self.engine.validate_memory(content, legs, first_pending..self.next_id())?;
        let parents: usize = legs.iter().map(|leg| leg.parents().len() * 8 + 2).sum();
        let write = Write::Memory { content: content.to_vec(), legs: legs.to_vec() };
        self.admit(write, content.len() + parents)
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
        if !(self.engine.graph.next_id()..self.next_id()).contains(&id.get()) {
            self.engine.check_alive(id.get())?;
        }
        VectorIndex::default().check(vector)?;
        limits::check("records in one batch", self.writes.len() + 1, BATCH_MAX_RECORDS)?;
        let numbers = vector_bytes(vector);
        limits::check("batch size in bytes", self.size_bytes + numbers.len(), BATCH_MAX_BYTES)?;
        self.size_bytes += numbers.len();
        self.writes.push(Write::Vector { id, numbers });
        Ok(())
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
        self.check_writable()?;
        let (value, writes) = {
            let mut batch = Batch { engine: self, writes: Vec::new(), size_bytes: 0 };
            let value = collect(&mut batch)?;
            (value, batch.writes)
        };
        self.check_batch_vectors(&writes)?;
        self.write_batch(&writes)?;
        Ok(value)
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
                Write::Memory { content, legs } => Entry::Memory { legs, content },
                Write::Vector { id, numbers } => Entry::Vector { id: id.get(), numbers },
            })
            .collect();
        self.write_entries(&entries)
    }
}
