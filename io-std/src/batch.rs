//! [`Batch`]: the writes of [`Agent::batch`](crate::Agent::batch) and
//! [`Agent::stage`](crate::Agent::stage), whether the agent is open here or on a memory server.
#![allow(deprecated)] // `ClientBatch` carries a served batch: deprecated to users only.

use std::marker::PhantomData;

use cheesedb_core::{Error, Id, Leg, LocalOperation, ReadSet, Storage};

use crate::client::ClientBatch;
use crate::files::FileStorage;
use crate::shared::SharedStorage;

/// Collects writes that commit together: each is checked when it is made and gets its final
/// id at once; a memory may name lots and memories added earlier in the batch. With read
/// tracking on (see [`Agent::track_reads`](crate::Agent::track_reads)), a memory remembered
/// here rests on what the handle read, as one remembered outside a batch does.
///
/// For an agent open in this process the batch is collected in RAM; for one reached through a
/// memory server each write is one request, staged there (the errors of a connection may then
/// come from any write).
pub struct Batch<'a, S: SharedStorage = FileStorage> {
    writes: Writes<'a>,
    _storage: PhantomData<fn() -> S>,
}

/// Where the writes go.
enum Writes<'a> {
    /// Into a batch of the engine in this process, with the reads a memory is given.
    Local { engine: &'a mut (dyn EngineBatch + 'a), tracked: &'a mut TrackedReads },
    /// To the handle's session on a memory server, which adds its own reads.
    Served(&'a mut (dyn EngineBatch + 'a)),
}

/// The reads the memories of a local batch are given, and whether one was.
#[derive(Debug, Default)]
pub(crate) struct TrackedReads {
    /// What the handle read when the batch (or its step) began; `None` with tracking off.
    pub(crate) reads: Option<ReadSet>,
    /// Whether a memory was written with them: once the batch is written they are forgotten.
    pub(crate) used: bool,
}

impl<S: SharedStorage> std::fmt::Debug for Batch<'_, S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Batch").field("len", &self.len()).finish_non_exhaustive()
    }
}

/// The writes of a batch: an engine's, whatever its storage, or a server session's.
pub(crate) trait EngineBatch {
    fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error>;
    fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error>;
    fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error>;
    fn len(&self) -> usize;
}

impl<S: Storage> EngineBatch for cheesedb_core::Batch<'_, S> {
    fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        cheesedb_core::Batch::add_lot(self, label, content)
    }

    fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        cheesedb_core::Batch::remember_tracked(self, content, legs, reads)
    }

    fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        cheesedb_core::Batch::set_vector(self, id, vector)
    }

    fn len(&self) -> usize {
        cheesedb_core::Batch::len(self)
    }
}

impl EngineBatch for ClientBatch<'_> {
    fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        ClientBatch::add_lot(self, label, content)
    }

    /// A server adds the reads of its session to a memory of a batch, and no others.
    fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        if !reads.is_empty() {
            return Err(Error::NeedsLocalStore { operation: LocalOperation::ReadsGivenInBatch });
        }
        ClientBatch::remember(self, content, legs)
    }

    fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        ClientBatch::set_vector(self, id, vector)
    }

    fn len(&self) -> usize {
        ClientBatch::len(self)
    }
}

impl<'a, S: SharedStorage> Batch<'a, S> {
    /// The batch of an engine in this process; its memories get the reads of `tracked`.
    pub(crate) fn local(engine: &'a mut (dyn EngineBatch + 'a), tracked: &'a mut TrackedReads) -> Batch<'a, S> {
        Batch { writes: Writes::Local { engine, tracked }, _storage: PhantomData }
    }

    /// The batch of a session on a memory server.
    pub(crate) fn served(batch: &'a mut (dyn EngineBatch + 'a)) -> Batch<'a, S> {
        Batch { writes: Writes::Served(batch), _storage: PhantomData }
    }

    /// Adds a lot; returns the id it will have.
    ///
    /// # Errors
    ///
    /// As [`Agent::add_lot`](crate::Agent::add_lot) before anything is written; through a
    /// server, the errors of a connection.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        match &mut self.writes {
            Writes::Local { engine, .. } => engine.add_lot(label, content),
            Writes::Served(batch) => batch.add_lot(label, content),
        }
    }

    /// Adds a memory learned through `legs` (a parent may be added earlier in the batch), and,
    /// with read tracking on, through what the handle read; returns the id it will have.
    ///
    /// # Errors
    ///
    /// As [`Agent::remember`](crate::Agent::remember) before anything is written; through a
    /// server, the errors of a connection.
    pub fn remember(&mut self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.remember_tracked(content, legs, &ReadSet::new())
    }

    /// Adds a memory learned through `legs` and through every id of `reads` (added to each
    /// leg, as [`Agent::remember_tracked`](crate::Agent::remember_tracked) does), and through
    /// what the handle read when it tracks reads.
    ///
    /// # Errors
    ///
    /// As [`Agent::remember_tracked`](crate::Agent::remember_tracked) before anything is
    /// written. Through a server, which adds only the reads of its own session to a batch,
    /// `Error::NeedsLocalStore` when `reads` is not empty, and the errors of a connection.
    pub fn remember_tracked(&mut self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        match &mut self.writes {
            Writes::Local { engine, tracked } => {
                let Some(session) = &tracked.reads else { return engine.remember_tracked(content, legs, reads) };
                let all: ReadSet = session.ids().iter().chain(reads.ids()).copied().collect();
                let id = engine.remember_tracked(content, legs, &all)?;
                tracked.used = true;
                Ok(id)
            }
            Writes::Served(batch) => batch.remember_tracked(content, legs, reads),
        }
    }

    /// Attaches `vector` to an alive lot or memory, or to one added earlier in the batch.
    ///
    /// # Errors
    ///
    /// As [`Agent::set_vector`](crate::Agent::set_vector) before anything is written; through
    /// a server, the errors of a connection.
    pub fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        match &mut self.writes {
            Writes::Local { engine, .. } => engine.set_vector(id, vector),
            Writes::Served(batch) => batch.set_vector(id, vector),
        }
    }

    /// How many writes were collected: in a step of a staged batch, those of every step so far
    /// for an agent open here, those of this step through a server.
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.writes {
            Writes::Local { engine, .. } => engine.len(),
            Writes::Served(batch) => batch.len(),
        }
    }

    /// Whether nothing was collected.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
