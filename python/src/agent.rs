//! `Agent`: one agent's memory, shared between Python threads.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb::{Fingerprint, Mode};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::batch::Batch;
use crate::convert::{self, Content, IdArgument, Legs, Limit, ModeArgument, Vector};
use crate::errors::{closed, invalid_argument, IntoPython};
use crate::gate::Gate;
use crate::node::{python_repr, Hit, Node};
use crate::report::report_dict;

/// The engine handle of an open agent, taken away when it is closed (by the agent itself or by
/// its store). The store keeps a weak reference to close it along with itself.
#[derive(Default)]
pub(crate) struct AgentSlot {
    handle: Mutex<Option<cheesedb::Agent>>,
}

impl AgentSlot {
    /// A slot holding `handle`.
    pub(crate) fn new(handle: cheesedb::Agent) -> AgentSlot {
        AgentSlot { handle: Mutex::new(Some(handle)) }
    }

    /// The handle inside, or nothing once closed. The inner lock only guards an `Option`, which
    /// a panic cannot leave half-changed.
    fn slot(&self) -> MutexGuard<'_, Option<cheesedb::Agent>> {
        self.handle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A clone of the handle, for one call.
    ///
    /// # Errors
    ///
    /// `ClosedError` once the agent or its store was closed.
    pub(crate) fn handle(&self) -> PyResult<cheesedb::Agent> {
        self.slot().clone().ok_or_else(|| closed("agent"))
    }

    /// Takes the handle out; later calls get `ClosedError`.
    pub(crate) fn take(&self) -> Option<cheesedb::Agent> {
        self.slot().take()
    }
}

/// One agent's memory, opened with `Store.open_agent(token)`.
///
/// Every method may be called from several threads at once; the calls let go of the GIL while
/// they work, so other Python threads run meanwhile. Reads never wait for writes' syncs of
/// other threads longer than the engine needs; writes wait while another thread's batch of this
/// agent is open. Also a context manager: `with store.open_agent(token) as alice:` closes it
/// at the end.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Agent {
    slot: Arc<AgentSlot>,
    gate: Arc<Gate>,
    name: String,
}

impl Agent {
    /// An agent object for an open handle.
    pub(crate) fn new(slot: Arc<AgentSlot>, gate: Arc<Gate>, name: String) -> Agent {
        Agent { slot, gate, name }
    }

    /// Runs a read on the engine with the GIL released.
    fn read<T: Send>(
        &self,
        py: Python<'_>,
        action: impl FnOnce(&cheesedb::Agent) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        let agent = self.slot.handle()?;
        py.detach(|| action(&agent)).into_python(py)
    }

    /// Runs a write on the engine with the GIL released, once no batch of another thread holds
    /// this agent's gate.
    fn write<T: Send>(
        &self,
        py: Python<'_>,
        action: impl FnOnce(&cheesedb::Agent) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        let agent = self.slot.handle()?;
        let gate = &self.gate;
        let outcome = py.detach(|| gate.pass().map(|_held| action(&agent)))?;
        outcome.into_python(py)
    }
}

#[pymethods]
impl Agent {
    /// The name this agent was created with.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Adds a source (a lot): a non-empty label and its content (str, stored as UTF-8, or
    /// bytes). Returns its id. Durable when it returns.
    #[pyo3(text_signature = "(self, label, content)")]
    fn add_lot(&self, py: Python<'_>, label: String, content: Content) -> PyResult<u64> {
        self.write(py, |agent| agent.add_lot(&label, &content.0)).map(cheesedb::Id::get)
    }

    /// Adds a memory learned through `legs`: a list of legs, each a list of parent ids (lots or
    /// memories) that must all stay alive for the leg to hold, such as [[a], [b, c]]. The
    /// memory lives while at least one leg holds. Returns its id. Durable when it returns.
    #[pyo3(text_signature = "(self, content, legs)")]
    fn remember(&self, py: Python<'_>, content: Content, legs: Legs) -> PyResult<u64> {
        self.write(py, |agent| agent.remember(&content.0, &legs.0)).map(cheesedb::Id::get)
    }

    /// The memories that `recall(id, mode)` would remove, ascending, without writing anything.
    /// mode "fair": a memory dies when none of its legs still holds; "strict": when the id is
    /// anywhere in its history.
    #[pyo3(signature = (id, mode = ModeArgument(Mode::Fair)), text_signature = "(self, id, mode='fair')")]
    fn preview_recall(&self, py: Python<'_>, id: IdArgument, mode: ModeArgument) -> PyResult<Vec<u64>> {
        let removed = self.read(py, |agent| agent.preview_recall(id.0, mode.0))?;
        Ok(removed.into_iter().map(cheesedb::Id::get).collect())
    }

    /// Recalls `id` (a lot or memory) and every memory that depended on it (see
    /// preview_recall for the modes); returns the memories removed because of it, ascending.
    /// With erase=True their text is gone from the files on disk when this returns; otherwise
    /// it is hidden at once and removed from disk by compact().
    #[pyo3(
        signature = (id, mode = ModeArgument(Mode::Fair), erase = false),
        text_signature = "(self, id, mode='fair', erase=False)"
    )]
    fn recall(&self, py: Python<'_>, id: IdArgument, mode: ModeArgument, erase: bool) -> PyResult<Vec<u64>> {
        let removal = convert::removal(erase);
        let removed = self.write(py, |agent| agent.recall(id.0, mode.0, removal))?;
        Ok(removed.into_iter().map(cheesedb::Id::get).collect())
    }

    /// One lot or memory, read from disk and checked against its digest. A recalled one has
    /// alive False and content None.
    #[pyo3(text_signature = "(self, id)")]
    fn get(&self, py: Python<'_>, id: IdArgument) -> PyResult<Node> {
        self.read(py, |agent| agent.get(id.0)).map(Node::from)
    }

    /// The alive lots and memories, ascending by id.
    #[pyo3(text_signature = "(self)")]
    fn list(&self, py: Python<'_>) -> PyResult<Vec<Node>> {
        let nodes = self.read(py, |agent| {
            let mut ids = agent.lots()?;
            ids.extend(agent.memories()?);
            ids.sort_unstable();
            let mut nodes = Vec::with_capacity(ids.len());
            for id in ids {
                let node = agent.get(id)?;
                // A recall on another thread may have come between the listing and the read.
                if node.is_alive() {
                    nodes.push(node);
                }
            }
            Ok(nodes)
        })?;
        Ok(nodes.into_iter().map(Node::from).collect())
    }

    /// Lots and memories whose content holds words of `query`, best first (BM25), at most
    /// `limit`. Recalled ones are never found.
    #[pyo3(signature = (query, limit = Limit(10)), text_signature = "(self, query, limit=10)")]
    fn search(&self, py: Python<'_>, query: String, limit: Limit) -> PyResult<Vec<Hit>> {
        let hits = self.read(py, |agent| agent.search(&query, limit.0))?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// Attaches a vector (a sequence of finite numbers, not all zero; one dimension per agent)
    /// to the lot or memory `id`, replacing any it had. Durable when it returns.
    #[pyo3(text_signature = "(self, id, vector)")]
    fn set_vector(&self, py: Python<'_>, id: IdArgument, vector: Vector) -> PyResult<()> {
        self.write(py, |agent| agent.set_vector(id.0, &vector.0))
    }

    /// The lots and memories whose vectors are nearest to `vector` by cosine, best first, at
    /// most `limit`.
    #[pyo3(signature = (vector, limit = Limit(10)), text_signature = "(self, vector, limit=10)")]
    fn search_vector(&self, py: Python<'_>, vector: Vector, limit: Limit) -> PyResult<Vec<Hit>> {
        let hits = self.read(py, |agent| agent.search_vector(&vector.0, limit.0))?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// A keyword search and a vector search fused by reciprocal rank, best first, at most
    /// `limit`.
    #[pyo3(signature = (query, vector, limit = Limit(10)), text_signature = "(self, query, vector, limit=10)")]
    fn search_hybrid(&self, py: Python<'_>, query: String, vector: Vector, limit: Limit) -> PyResult<Vec<Hit>> {
        let hits = self.read(py, |agent| agent.search_hybrid(&query, &vector.0, limit.0))?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// Whether the lot or memory `id` has a vector.
    #[pyo3(text_signature = "(self, id)")]
    fn has_vector(&self, py: Python<'_>, id: IdArgument) -> PyResult<bool> {
        self.read(py, |agent| agent.has_vector(id.0))
    }

    /// Re-reads and checks the whole history; returns its head fingerprint as text. Keep it
    /// elsewhere: verify(kept=that_text) later also checks that the history still passes
    /// through it (HistoryMismatchError when it was cut or rewritten).
    #[pyo3(signature = (kept = None), text_signature = "(self, kept=None)")]
    fn verify(&self, py: Python<'_>, kept: Option<String>) -> PyResult<String> {
        let kept: Option<Fingerprint> = match kept {
            None => None,
            Some(text) => Some(text.parse().map_err(|_| {
                invalid_argument("a kept fingerprint is the text verify() returned: <records>-<64 hex digits>")
            })?),
        };
        let fingerprint = self.read(py, |agent| match &kept {
            None => agent.verify(),
            Some(kept) => agent.verify_extends(kept),
        })?;
        Ok(fingerprint.to_string())
    }

    /// A batch: `with alice.batch() as batch:` collects writes (batch.add_lot,
    /// batch.remember, batch.set_vector) whose ids are final at once, and writes them all with
    /// one commit and one sync when the block ends. If the block raises, nothing is written.
    /// While it is open, writes to this agent from other threads wait for it, and writes
    /// through the agent on this thread are refused.
    #[pyo3(text_signature = "(self)")]
    fn batch(&self) -> PyResult<Batch> {
        Ok(Batch::new(self.slot.handle()?, self.gate.clone()))
    }

    /// Rewrites the agent's files without the text of recalled lots and memories.
    #[pyo3(text_signature = "(self)")]
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.write(py, cheesedb::Agent::compact)
    }

    /// What opening this agent found and did (segments, records, repairs), as a dict.
    #[pyo3(text_signature = "(self)")]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let agent = self.slot.handle()?;
        let report = py.detach(|| agent.report());
        report_dict(py, &report)
    }

    /// Closes this handle; later calls raise ClosedError. When it is the last handle of the
    /// agent, the snapshot that is due is written now.
    #[pyo3(text_signature = "(self)")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.slot.take() {
            Some(agent) => py.detach(|| agent.close()).into_python(py),
            None => Ok(()),
        }
    }

    fn __enter__(this: Bound<'_, Self>) -> Bound<'_, Self> {
        this
    }

    /// Closes the agent; an error of closing is raised only when the block itself did not
    /// raise, so it never hides the block's own exception.
    #[pyo3(signature = (exception_type, _exception = None, _traceback = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exception_type: Option<&Bound<'_, PyType>>,
        _exception: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let closed = self.close(py);
        if exception_type.is_none() {
            closed?;
        }
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.slot.handle().is_ok() { "" } else { ", closed" };
        format!("Agent(name={}{state})", python_repr(py, &self.name))
    }
}
