//! `Batch`: writes that commit together, as a Python context manager.
//!
//! Python cannot hand the engine one closure holding the whole `with` block, so the writes are
//! staged one call at a time on the agent's session (`cheesedb::Agent::begin_staged` at
//! `__enter__`, `stage` for each write) and written at `__exit__` (`commit_staged`, or
//! `drop_staged` when the block raised). While the batch is open the library keeps every other
//! write of the agent through this process out (with the GIL released, they wait), and refuses
//! one on the batch's own thread, so the ids handed out stay final.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::{Content, IdArgument, Legs, Vector};
use crate::errors::{closed, invalid_argument, IntoPython};

/// Where a batch is in its life.
enum State {
    /// Made by `Agent.batch()`, not entered yet.
    Made,
    /// Being entered: waiting for the agent.
    Entering,
    /// Inside its `with` block, holding the agent, with how many writes were staged.
    Open { writes: usize },
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
    state: Mutex<State>,
}

impl Batch {
    /// A batch of `agent`, to be entered.
    pub(crate) fn new(agent: cheesedb::Agent) -> Batch {
        Batch { agent, state: Mutex::new(State::Made) }
    }

    /// The state; it is only ever replaced whole, so a panic cannot leave it half-changed.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stages one write with the GIL released: `collect` gets the batch of the session.
    fn stage<T: Send>(
        &self,
        py: Python<'_>,
        collect: impl FnOnce(&mut cheesedb::Batch<'_>) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        // Before the state's lock, which a thread of the parent may have held at a fork.
        self.agent.check_same_process().into_python(py)?;
        let agent = &self.agent;
        let outcome = py.detach(|| match &mut *self.state() {
            State::Open { writes } => {
                let staged = agent.stage(collect);
                *writes += usize::from(staged.is_ok());
                Ok(staged)
            }
            State::Made | State::Entering => {
                Err(invalid_argument("the batch is not open: use it as `with agent.batch() as batch:`"))
            }
            State::Ended => Err(closed("batch")),
        })?;
        outcome.into_python(py)
    }
}

impl Drop for Batch {
    /// A batch dropped while open (entered by hand and never exited) writes nothing and lets
    /// the other writers of its agent go on.
    fn drop(&mut self) {
        // A forked child's copy is left alone: the parent's thread that holds the state may not
        // exist here, and the batch is the parent's.
        if self.agent.check_same_process().is_err() {
            return;
        }
        let state = std::mem::replace(&mut *self.state(), State::Ended);
        if let State::Open { .. } = state {
            // Nobody is left to hear of a failure: a broken connection ends the session on the
            // server, which drops the batch as well.
            let _ = self.agent.drop_staged();
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
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.agent.check_same_process().into_python(py)?;
        Ok(match &*self.state() {
            State::Open { writes } => *writes,
            State::Made | State::Entering | State::Ended => 0,
        })
    }

    /// Opens the batch: waits (with the GIL released) while a batch of another thread holds
    /// the agent. A batch is entered once.
    fn __enter__<'py>(this: Bound<'py, Self>, py: Python<'py>) -> PyResult<Bound<'py, Self>> {
        let batch = this.get();
        // Before the state's lock, which a thread of the parent may have held at a fork.
        batch.agent.check_same_process().into_python(py)?;
        {
            let mut state = batch.state();
            if !matches!(*state, State::Made) {
                return Err(invalid_argument("a batch is entered once: make a new one with agent.batch()"));
            }
            *state = State::Entering;
        }
        let agent = &batch.agent;
        let begun = py.detach(|| agent.begin_staged());
        *batch.state() = if begun.is_ok() { State::Open { writes: 0 } } else { State::Made };
        begun.into_python(py)?;
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
        let State::Open { .. } = std::mem::replace(&mut *self.state(), State::Ended) else {
            return Ok(false);
        };
        let write = exception_type.is_none();
        let agent = &self.agent;
        let ended = py.detach(|| if write { agent.commit_staged() } else { agent.drop_staged() });
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
            State::Made | State::Entering => "Batch(not entered)".to_owned(),
            State::Open { writes } => format!("Batch(open, {writes} writes staged)"),
            State::Ended => "Batch(ended)".to_owned(),
        }
    }
}
