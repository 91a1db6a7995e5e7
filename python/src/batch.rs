//! `Batch`: writes that commit together, as a Python context manager.
//!
//! Python cannot hand the engine one closure holding the whole `with` block, so the writes are
//! staged one call at a time (`cheesedb::Agent::stage`, or `ClientAgent::stage` on the
//! server's side of a remote agent) and written at `__exit__` (`commit_staged`). The agent's
//! gate, held from `__enter__` to `__exit__`, keeps every other write of the agent through
//! this process out meanwhile, so the ids handed out stay final.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb::{InternalRule, ReadSet, StagedBatch};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::{Content, IdArgument, Legs, Vector};
use crate::errors::{closed, invalid_argument, IntoPython};
use crate::gate::Gate;
use crate::handle::Handle;
use crate::tracking::Tracking;

/// The writes staged so far.
enum Staged {
    /// A local agent's batch, kept here.
    Local(StagedBatch),
    /// A remote agent's batch, kept by the server in this handle's session.
    Remote {
        /// How many writes the server staged.
        writes: usize,
        /// Whether a write was sent: the server opened the batch then, even if it refused it.
        sent: bool,
    },
}

impl Staged {
    fn len(&self) -> usize {
        match self {
            Staged::Local(staged) => staged.len(),
            Staged::Remote { writes, .. } => *writes,
        }
    }
}

/// Where a batch is in its life.
enum State {
    /// Made by `Agent.batch()`, not entered yet.
    Made,
    /// Inside its `with` block, holding the gate, with the writes staged so far and the reads
    /// that local memories of the batch were given (forgotten once it is written).
    Open(Staged, Option<ReadSet>),
    /// Committed or rolled back.
    Ended,
}

/// Writes that commit together: made by `Agent.batch()`, used as `with alice.batch() as
/// batch:`. Each write returns its final id at once and may name lots and memories added
/// earlier in the batch; when the block ends they are written with one commit and one sync,
/// and if it raises nothing is written (the ids handed out are given again later).
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Batch {
    agent: Handle,
    gate: Arc<Gate>,
    tracking: Arc<Tracking>,
    state: Mutex<State>,
}

impl Batch {
    /// A batch of `agent`, to be entered; `tracking` is the read tracking of its handle.
    pub(crate) fn new(agent: Handle, gate: Arc<Gate>, tracking: Arc<Tracking>) -> Batch {
        Batch { agent, gate, tracking, state: Mutex::new(State::Made) }
    }

    /// The state; it is only ever replaced whole, so a panic cannot leave it half-changed.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stages one write with the GIL released: `collect` gets the batch of the local engine
    /// or of the server session, and the reads a local memory is to be given.
    fn stage<T: Send>(
        &self,
        py: Python<'_>,
        collect: impl FnOnce(Stager<'_, '_>, Option<&ReadSet>) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        // Before the state's lock, which a thread of the parent may have held at a fork.
        self.agent.check_same_process().into_python(py)?;
        let outcome = py.detach(|| match &mut *self.state() {
            State::Open(staged, reads) => Ok(match (&self.agent, staged) {
                (Handle::Local(agent), Staged::Local(staged)) => {
                    agent.stage(staged, |batch| collect(Stager::Local(batch), reads.as_ref()))
                }
                (Handle::Remote(agent), Staged::Remote { writes, sent }) => {
                    *sent = true;
                    let staged = agent.stage(|batch| collect(Stager::Remote(batch), None));
                    *writes += usize::from(staged.is_ok());
                    staged
                }
                _ => Err(cheesedb::Error::Internal { what: InternalRule::BatchStagingMatchesAgent }),
            }),
            State::Made => Err(invalid_argument("the batch is not open: use it as `with agent.batch() as batch:`")),
            State::Ended => Err(closed("batch")),
        })?;
        outcome.into_python(py)
    }
}

/// Runs the same code on either kind of batch, as `either!` does for agents.
macro_rules! stage_either {
    ($stager:expr, $batch:ident => $body:expr) => {
        match $stager {
            Stager::Local($batch) => $body,
            Stager::Remote($batch) => $body,
        }
    };
}

/// The batch one staged write goes into.
pub(crate) enum Stager<'batch, 'agent> {
    /// A local agent's batch.
    Local(&'batch mut cheesedb::Batch<'agent, cheesedb::FileStorage>),
    /// A remote agent's batch.
    Remote(&'batch mut cheesedb::ClientBatch<'agent>),
}

impl Drop for Batch {
    /// A batch dropped while open (entered by hand and never exited) writes nothing and lets
    /// the other writers of its agent go on; a server is told to drop what it staged, so the
    /// writers of other programs need not wait for its client timeout.
    fn drop(&mut self) {
        // A forked child's copy is left alone: the parent's thread that holds the state or the
        // gate may not exist here, and the server's batch is the parent's.
        if self.agent.check_same_process().is_err() {
            return;
        }
        let state = std::mem::replace(&mut *self.state(), State::Ended);
        if let State::Open(staged, _) = state {
            if let (Handle::Remote(agent), Staged::Remote { sent: true, .. }) = (&self.agent, staged) {
                // Nobody is left to hear of a failure: a broken connection ends the session
                // on the server, which drops the batch as well.
                let _ = agent.drop_staged();
            }
            self.gate.release();
        }
    }
}

#[pymethods]
impl Batch {
    /// Adds a source to the batch; returns the id it will have.
    #[pyo3(text_signature = "(self, label, content)")]
    fn add_lot(&self, py: Python<'_>, label: String, content: Content) -> PyResult<u64> {
        self.stage(py, |batch, _| stage_either!(batch, batch => batch.add_lot(&label, &content.0)))
            .map(cheesedb::Id::get)
    }

    /// Adds a memory to the batch (legs as for Agent.remember; a parent may be added earlier in
    /// the batch); returns the id it will have.
    #[pyo3(text_signature = "(self, content, legs)")]
    fn remember(&self, py: Python<'_>, content: Content, legs: Legs) -> PyResult<u64> {
        self.stage(py, |batch, reads| match (batch, reads) {
            (Stager::Local(batch), Some(reads)) => batch.remember_tracked(&content.0, &legs.0, reads),
            (batch, _) => stage_either!(batch, batch => batch.remember(&content.0, &legs.0)),
        })
        .map(cheesedb::Id::get)
    }

    /// Attaches a vector to a lot or memory, alive or added earlier in the batch.
    #[pyo3(text_signature = "(self, id, vector)")]
    fn set_vector(&self, py: Python<'_>, id: IdArgument, vector: Vector) -> PyResult<()> {
        self.stage(py, |batch, _| stage_either!(batch, batch => batch.set_vector(id.0, &vector.0)))
    }

    /// How many writes are staged.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.agent.check_same_process().into_python(py)?;
        Ok(match &*self.state() {
            State::Open(staged, _) => staged.len(),
            State::Made | State::Ended => 0,
        })
    }

    /// Opens the batch: waits (with the GIL released) while a batch of another thread holds
    /// the agent. A batch is entered once.
    fn __enter__<'py>(this: Bound<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, Self>> {
        let batch = this.get();
        // Before the gate, which a batch of a thread of the parent may have held at a fork.
        batch.agent.check_same_process().into_python(py)?;
        let gate = &batch.gate;
        py.detach(|| gate.acquire())?;
        let mut state = batch.state();
        if !matches!(*state, State::Made) {
            drop(state);
            gate.release();
            return Err(invalid_argument("a batch is entered once: make a new one with agent.batch()"));
        }
        let staged = match &batch.agent {
            Handle::Local(_) => Staged::Local(StagedBatch::default()),
            Handle::Remote(_) => Staged::Remote { writes: 0, sent: false },
        };
        *state = State::Open(staged, batch.tracking.snapshot());
        drop(state);
        Ok(this)
    }

    /// Ends the batch: writes it with one commit and one sync when the block did not raise,
    /// drops it otherwise; lets the agent's other writers go on either way.
    #[pyo3(signature = (exception_type, _exception = None, _traceback = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exception_type: Option<&Bound<'_, PyType>>,
        _exception: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        // A forked child neither writes nor drops the parent's batch; it only hears why.
        self.agent.check_same_process().into_python(py)?;
        let State::Open(staged, reads) = std::mem::replace(&mut *self.state(), State::Ended) else {
            return Ok(false);
        };
        let write = exception_type.is_none();
        let (agent, gate) = (&self.agent, &self.gate);
        let ended = py.detach(|| {
            let ended = match (agent, staged) {
                (Handle::Local(agent), Staged::Local(staged)) => {
                    if write && !staged.is_empty() {
                        agent.commit_staged(staged)
                    } else {
                        Ok(())
                    }
                }
                (Handle::Remote(agent), Staged::Remote { sent, .. }) => match (sent, write) {
                    (false, _) => Ok(()),
                    (true, true) => agent.commit_staged(),
                    (true, false) => agent.drop_staged(),
                },
                _ => Err(cheesedb::Error::Internal { what: InternalRule::BatchStagingMatchesAgent }),
            };
            gate.release();
            ended
        });
        if write && ended.is_ok() {
            if let Some(reads) = &reads {
                self.tracking.forget(reads);
            }
        }
        if write {
            ended.into_python(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        if self.agent.check_same_process().is_err() {
            return "Batch(of another process)".to_owned();
        }
        match &*self.state() {
            State::Made => "Batch(not entered)".to_owned(),
            State::Open(staged, _) => format!("Batch(open, {} writes staged)", staged.len()),
            State::Ended => "Batch(ended)".to_owned(),
        }
    }
}
