//! [`ClientBatch`]: the writes of [`ClientAgent::batch`](super::ClientAgent::batch), staged on
//! the server one request each.
#![allow(deprecated)] // The deprecated type is this module's own.

use cheesedb_core::{Error, Id, Leg};

use super::connection::Connection;
use crate::protocol::{wire_leg, BatchWrite, Request, Response};

/// Collects writes that commit together, as [`Batch`](crate::Batch) does: each is checked by
/// the server when made, and ids handed out are final.
///
/// Deprecated: the [`Batch`](crate::Batch) of an [`Agent`](crate::Agent) is one type whether
/// the agent is local or served.
#[deprecated(since = "1.1.0", note = "use `Batch`, the batch of a local or served `Agent`")]
pub struct ClientBatch<'c> {
    connection: &'c mut Connection,
    staged: usize,
    /// Whether the batch was committed or dropped, or is left open on purpose (a step of
    /// [`ClientAgent::stage`](super::ClientAgent::stage)): dropping it then sends nothing.
    ended: bool,
}

impl std::fmt::Debug for ClientBatch<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ClientBatch").field("staged", &self.staged).finish_non_exhaustive()
    }
}

impl<'c> ClientBatch<'c> {
    pub(crate) fn new(connection: &'c mut Connection) -> ClientBatch<'c> {
        ClientBatch { connection, staged: 0, ended: false }
    }

    /// A batch whose writes join the session's open batch, which stays open when this is
    /// dropped: one step of [`ClientAgent::stage`](super::ClientAgent::stage).
    pub(crate) fn step(connection: &'c mut Connection) -> ClientBatch<'c> {
        ClientBatch { connection, staged: 0, ended: true }
    }

    fn stage(&mut self, write: BatchWrite) -> Result<Response, Error> {
        let response = self.connection.call(&Request::BatchStage(write))?;
        self.staged += 1;
        Ok(response)
    }

    fn stage_node(&mut self, write: BatchWrite) -> Result<Id, Error> {
        match self.stage(write)? {
            Response::Id(id) => Ok(Id::from(id)),
            _ => Err(self.connection.unexpected()),
        }
    }

    /// As [`Batch::add_lot`](crate::Batch::add_lot).
    ///
    /// # Errors
    ///
    /// As [`Batch::add_lot`](crate::Batch::add_lot), and the errors of a connection.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.stage_node(BatchWrite::AddLot { label: String::from(label), content: content.to_vec() })
    }

    /// As [`Batch::remember`](crate::Batch::remember) (with the session's reads added when
    /// tracking is on).
    ///
    /// # Errors
    ///
    /// As [`Batch::remember`](crate::Batch::remember), and the errors of a connection.
    pub fn remember(&mut self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.stage_node(BatchWrite::Remember { content: content.to_vec(), legs: legs.iter().map(wire_leg).collect() })
    }

    /// As [`Batch::set_vector`](crate::Batch::set_vector).
    ///
    /// # Errors
    ///
    /// As [`Batch::set_vector`](crate::Batch::set_vector), and the errors of a connection.
    pub fn set_vector(&mut self, id: Id, vector: &[f32]) -> Result<(), Error> {
        match self.stage(BatchWrite::SetVector { id: id.get(), vector: vector.to_vec() })? {
            Response::Done => Ok(()),
            _ => Err(self.connection.unexpected()),
        }
    }

    /// How many writes were collected.
    #[must_use]
    pub fn len(&self) -> usize {
        self.staged
    }

    /// Whether nothing was collected.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.staged == 0
    }

    /// Writes the batch with one sync.
    pub(crate) fn commit(mut self) -> Result<(), Error> {
        self.ended = true;
        match self.connection.call(&Request::BatchCommit)? {
            Response::Done => Ok(()),
            _ => Err(self.connection.unexpected()),
        }
    }

    /// Drops what was staged; nothing of it is written.
    pub(crate) fn drop_staged(mut self) -> Result<(), Error> {
        self.ended = true;
        match self.connection.call(&Request::BatchDrop)? {
            Response::Done => Ok(()),
            _ => Err(self.connection.unexpected()),
        }
    }
}

impl Drop for ClientBatch<'_> {
    /// A batch left by a panic of its closure is dropped on the server, so the agent's other
    /// writers need not wait for the client timeout.
    fn drop(&mut self) {
        if !self.ended && !self.connection.is_broken() {
            let _ = self.connection.call(&Request::BatchDrop);
        }
    }
}
