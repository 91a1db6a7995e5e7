//! `Batch`: writes that commit together, as a Python context manager.
//!
//! Python cannot hand the engine one closure holding the whole `with` block, so the writes are
//! staged one call at a time (`cheesedb::Agent::stage`) and written at `__exit__`
//! (`Agent::commit_staged`). The agent's gate, held from `__enter__` to `__exit__`, keeps every
//! other write of the agent out meanwhile, so the ids handed out stay final.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb::{FileStorage, StagedBatch};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::{Content, IdArgument, Legs, Vector};
use crate::errors::{closed, invalid_argument, IntoPython};
use crate::gate::Gate;

/// Where a batch is in its life.
enum State {
    /// Made by `Agent.batch()`, not entered yet.
    Made,
    /// Inside its `with` block, holding the gate, with the writes staged so far.
    Open(StagedBatch),
    /// Committed or rolled back.
    Ended,
}

/// Writes that commit together: made by `Agent.batch()`, used as `with alice.batch() as
/// batch:`. Each write returns its final id at once and may name lots and memories added
/// earlier in the batch; when the block ends they are written with one commit and one sync,
/// and if it raises nothing is written (the ids handed out are given again later).
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Batch {
    agent: cheesedb::Agent,
    gate: Arc<Gate>,
    state: Mutex<State>,
}

impl Batch {
    /// A batch of `agent`, to be entered.
    pub(crate) fn new(agent: cheesedb::Agent, gate: Arc<Gate>) -> Batch {
        Batch { agent, gate, state: Mutex::new(State::Made) }
    }

    /// The state; it is only ever replaced whole, so a panic cannot leave it half-changed.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stages one write with the GIL released.
    fn stage<T: Send>(
        &self,
        py: Python<'_>,
        collect: impl FnOnce(&mut cheesedb::Batch<'_, FileStorage>) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        let outcome = py.detach(|| match &mut *self.state() {
            State::Open(staged) => Ok(self.agent.stage(staged, collect)),
            State::Made => Err(invalid_argument("the batch is not open: use it as `with agent.batch() as batch:`")),
            State::Ended => Err(closed("batch")),
        })?;
        outcome.into_python(py)
    }
}

impl Drop for Batch {
    /// A batch dropped while open (entered by hand and never exited) writes nothing and lets
    /// the other writers of its agent go on.
    fn drop(&mut self) {
        if matches!(*self.state(), State::Open(_)) {
            self.gate.release();
        }
    }
}

#[pymethods]
impl Batch {
    /// Adds a source to the batch; returns the id it will have.
    #[pyo3(text_signature = "(self, label, content)")]
    fn add_lot(&self, py: Python<'_>, label: String, content: Content) -> PyResult<u64> {
        self.stage(py, |batch| batch.add_lot(&label, &content.0)).map(cheesedb::Id::get)
    }

    /// Adds a memory to the batch (legs as for Agent.remember; a parent may be added earlier in
    /// the batch); returns the id it will have.
    #[pyo3(text_signature = "(self, content, legs)")]
    fn remember(&self, py: Python<'_>, content: Content, legs: Legs) -> PyResult<u64> {
        self.stage(py, |batch| batch.remember(&content.0, &legs.0)).map(cheesedb::Id::get)
    }

    /// Attaches a vector to a lot or memory, alive or added earlier in the batch.
    #[pyo3(text_signature = "(self, id, vector)")]
    fn set_vector(&self, py: Python<'_>, id: IdArgument, vector: Vector) -> PyResult<()> {
        self.stage(py, |batch| batch.set_vector(id.0, &vector.0))
    }

    /// How many writes are staged.
    fn __len__(&self) -> usize {
        match &*self.state() {
            State::Open(staged) => staged.len(),
            State::Made | State::Ended => 0,
        }
    }

    /// Opens the batch: waits (with the GIL released) while a batch of another thread holds
    /// the agent. A batch is entered once.
    fn __enter__<'py>(this: Bound<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, Self>> {
        let batch = this.get();
        let gate = &batch.gate;
        py.detach(|| gate.acquire())?;
        let mut state = batch.state();
        if !matches!(*state, State::Made) {
            drop(state);
            gate.release();
            return Err(invalid_argument("a batch is entered once: make a new one with agent.batch()"));
        }
        *state = State::Open(StagedBatch::default());
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
        let State::Open(staged) = std::mem::replace(&mut *self.state(), State::Ended) else {
            return Ok(false);
        };
        if exception_type.is_some() {
            drop(staged);
            self.gate.release();
            return Ok(false);
        }
        let agent = &self.agent;
        let committed = py.detach(|| {
            let committed = if staged.is_empty() { Ok(()) } else { agent.commit_staged(staged) };
            self.gate.release();
            committed
        });
        committed.into_python(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match &*self.state() {
            State::Made => "Batch(not entered)".to_owned(),
            State::Open(staged) => format!("Batch(open, {} writes staged)", staged.len()),
            State::Ended => "Batch(ended)".to_owned(),
        }
    }
}
