//! [`ServedAgent`]: an agent reached through a memory server, one request per call, behind the
//! same gate a local agent has, so that a batch of this thread cannot wait for itself.
#![allow(deprecated)] // `ClientAgent` is this handle's connection: deprecated to users only.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb_core::{
    Error, Fingerprint, Hit, Id, Leg, Mode, Node, ReadSet, Removal, Report, SearchPage, SearchQuery, TrustLevel,
};

use crate::batch::Batch;
use crate::batch_gate::BatchGate;
use crate::client::{ClientAgent, OpenedFacts};
use crate::process::OpeningProcess;
use crate::shared::SharedStorage;
use crate::space::ServedMember;

/// One open's state on this side: whether its session on the server has a staged batch.
#[derive(Debug)]
struct ServedSession {
    /// The gate of the agent, shared by every handle of it that one connected store opened.
    gate: Arc<BatchGate>,
    /// Whether a staged batch is open; while it is, its opening thread holds `gate`.
    batch_open: Mutex<bool>,
    process: OpeningProcess,
}

impl ServedSession {
    fn batch_open(&self) -> MutexGuard<'_, bool> {
        self.batch_open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for ServedSession {
    /// The server drops the batch of a session whose connection closed; the writers of this
    /// process need to hear of it too. A forked child leaves the gate alone: it is the parent's.
    fn drop(&mut self) {
        if self.process.is_current() && std::mem::take(&mut *self.batch_open()) {
            self.gate.release();
        }
    }
}

/// An agent's session on a memory server, as one open of it reaches it.
#[derive(Clone, Debug)]
pub(crate) struct ServedAgent {
    client: ClientAgent,
    session: Arc<ServedSession>,
    /// Whether writes are refused here (`--read-only`): the server's store may be writable.
    read_only: bool,
    /// What the server told of the agent when this handle opened it.
    opened: OpenedFacts,
}

impl ServedAgent {
    /// The handle of the session `client` opened, with what the server told of the agent then.
    pub(crate) fn open(client: ClientAgent, opened: OpenedFacts, gate: Arc<BatchGate>, read_only: bool) -> ServedAgent {
        let session = ServedSession { gate, batch_open: Mutex::new(false), process: OpeningProcess::current() };
        ServedAgent { client, session: Arc::new(session), read_only, opened }
    }

    /// Refuses a write of a read-only handle, or of a forked process before the gate (which a
    /// thread of the parent may hold at the fork).
    fn check_writable(&self) -> Result<(), Error> {
        self.client.check_same_process()?;
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        Ok(())
    }

    /// Sends a write once no staged batch holds the agent.
    fn write<T>(&self, write: impl FnOnce(&ClientAgent) -> Result<T, Error>) -> Result<T, Error> {
        self.check_writable()?;
        self.session.gate.write(|| write(&self.client))
    }

    pub(crate) fn check_same_process(&self) -> Result<(), Error> {
        self.client.check_same_process()
    }

    /// The gate of the agent, which the store that opened this handle keeps too.
    pub(crate) fn gate(&self) -> &Arc<BatchGate> {
        &self.session.gate
    }

    /// What a handle of this member to one of its spaces keeps: its calls are requests of
    /// this session, and its writes wait behind the same gate.
    pub(crate) fn as_member(&self) -> ServedMember {
        ServedMember { client: self.client.clone(), gate: self.session.gate.clone(), read_only: self.read_only }
    }

    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.write(|client| client.add_lot(label, content))
    }

    pub(crate) fn remember_tracked(&self, content: &[u8], legs: &[Leg], reads: &ReadSet) -> Result<Id, Error> {
        self.write(|client| client.remember_tracked(content, legs, reads))
    }

    pub(crate) fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.client.trust(id)
    }

    pub(crate) fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.write(|client| client.recall(id, mode, removal))
    }

    pub(crate) fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.client.preview_recall_with(id, mode, removal)
    }

    pub(crate) fn get(&self, id: Id) -> Result<Node, Error> {
        self.client.get(id)
    }

    pub(crate) fn audit(&self, id: Id) -> Result<Node, Error> {
        self.client.audit(id)
    }

    /// Asked of the server each time, so a deleted agent answers `AgentDeleted` as a local one.
    pub(crate) fn name(&self) -> Result<String, Error> {
        self.client.name()
    }

    pub(crate) fn space_name(&self, number: u64) -> Result<String, Error> {
        self.client.call(&crate::protocol::Request::SpaceName { number }, |response| match response {
            crate::protocol::Response::Name(name) => Some(name),
            _ => None,
        })
    }

    pub(crate) fn lots(&self) -> Result<Vec<Id>, Error> {
        self.client.lots()
    }

    pub(crate) fn memories(&self) -> Result<Vec<Id>, Error> {
        self.client.memories()
    }

    pub(crate) fn verify(&self, kept: Option<&Fingerprint>) -> Result<Fingerprint, Error> {
        match kept {
            None => self.client.verify(),
            Some(kept) => self.client.verify_extends(kept),
        }
    }

    pub(crate) fn compact(&self) -> Result<(), Error> {
        self.write(ClientAgent::compact)
    }

    pub(crate) fn is_encrypted(&self) -> bool {
        self.opened.encrypted
    }

    /// The server's report, or the one it gave when this handle opened when it cannot answer.
    pub(crate) fn report(&self) -> Report {
        self.client.report().unwrap_or_else(|_| self.opened.report.clone())
    }

    pub(crate) fn track_reads(&self, on: bool) -> Result<(), Error> {
        self.client.track_reads(on)
    }

    /// A batch staged on the server and committed at once; this thread holds the gate
    /// meanwhile, so a write of another handle on it is refused rather than left waiting.
    pub(crate) fn batch<S: SharedStorage, T>(
        &self,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.check_writable()?;
        self.session.gate.hold()?;
        let outcome = self.client.batch(|batch| collect(&mut Batch::served(batch)));
        self.session.gate.release();
        outcome
    }

    /// Opens the session's staged batch now, as a local agent does; the server opens its side
    /// with the first step.
    pub(crate) fn begin_staged(&self) -> Result<(), Error> {
        self.check_writable()?;
        let gate = &self.session.gate;
        if *self.session.batch_open() && gate.held_here() {
            return Err(Error::BatchOpen);
        }
        gate.hold()?;
        *self.session.batch_open() = true;
        Ok(())
    }

    /// One step of the session's staged batch, from any thread; the first opens it.
    pub(crate) fn stage<S: SharedStorage, T>(
        &self,
        collect: impl FnOnce(&mut Batch<'_, S>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.check_writable()?;
        let mut open = self.session.batch_open();
        if !*open {
            drop(open);
            self.session.gate.hold()?;
            open = self.session.batch_open();
            *open = true;
        }
        drop(open);
        self.client.stage(|batch| collect(&mut Batch::served(batch)))
    }

    pub(crate) fn commit_staged(&self) -> Result<(), Error> {
        self.end_staged(ClientAgent::commit_staged)
    }

    pub(crate) fn drop_staged(&self) -> Result<(), Error> {
        self.end_staged(ClientAgent::drop_staged)
    }

    /// Ends the staged batch, if one is open, with `end`, and lets go of the gate.
    fn end_staged(&self, end: impl FnOnce(&ClientAgent) -> Result<(), Error>) -> Result<(), Error> {
        self.client.check_same_process()?;
        if !std::mem::take(&mut *self.session.batch_open()) {
            return Ok(());
        }
        let ended = end(&self.client);
        self.session.gate.release();
        ended
    }

    pub(crate) fn close(self) -> Result<(), Error> {
        self.client.check_same_process()
    }

    pub(crate) fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.client.search(query, limit)
    }

    pub(crate) fn search_page(&self, query: &SearchQuery) -> Result<SearchPage, Error> {
        self.client.search_page(query)
    }

    pub(crate) fn set_vector(&self, id: Id, vector: &[f32]) -> Result<(), Error> {
        self.write(|client| client.set_vector(id, vector))
    }

    pub(crate) fn search_vector(&self, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.client.search_vector(vector, limit)
    }

    pub(crate) fn search_hybrid(&self, query: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>, Error> {
        self.client.search_hybrid(query, vector, limit)
    }

    pub(crate) fn has_vector(&self, id: Id) -> Result<bool, Error> {
        self.client.has_vector(id)
    }
}
