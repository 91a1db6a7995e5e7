//! `Agent`: one agent's memory, shared between Python threads: opened from a `Store` of this
//! process or through a `Client` of a memory server, with the same methods either way.

use std::sync::Arc;

use cheesedb::{Fingerprint, Mode, SearchQuery, TrustLevel};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::agent_slot::AgentSlot;
use crate::batch::Batch;
use crate::convert::{self, Content, IdArgument, Legs, Limit, ModeArgument, Vector};
use crate::errors::{exit_after, invalid_argument, IntoPython};
use crate::node::{python_repr, Hit, Node};
use crate::report::report_dict;
use crate::search_page::{python_page, Among, LeastTrust, SearchPage};

/// One agent's memory, opened with `Store.open_agent(token)` or, through a memory server,
/// `Client.open_agent(token)`; both give the same methods, values and exceptions.
///
/// Every method may be called from several threads at once; the calls let go of the GIL while
/// they work, so other Python threads run meanwhile. Reads never wait for writes' syncs of
/// other threads longer than the engine needs; writes wait while another thread's batch of this
/// agent is open. Also a context manager: `with store.open_agent(token) as alice:` closes it
/// at the end.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Agent {
    slot: Arc<AgentSlot>,
    name: String,
}

impl Agent {
    /// An agent object for an open handle.
    pub(crate) fn new(slot: Arc<AgentSlot>, name: String) -> Agent {
        Agent { slot, name }
    }

    /// Runs `action` on the engine or the server with the GIL released: a write may wait there
    /// for a batch of another thread. A forked process is refused first, before any lock of
    /// the agent is taken (a thread of the parent may have held it at the fork).
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        action: impl FnOnce(&cheesedb::Agent) -> Result<T, cheesedb::Error> + Send,
    ) -> PyResult<T> {
        let handle = self.slot.handle()?;
        handle.check_same_process().into_python(py)?;
        py.detach(|| action(&handle)).into_python(py)
    }

    /// The slot of the handle, for what holds on to the agent (its spaces).
    pub(crate) fn slot(&self) -> &Arc<AgentSlot> {
        &self.slot
    }

    /// Runs a search; its hits count as read when the agent tracks reads.
    fn search_with(
        &self,
        py: Python<'_>,
        action: impl FnOnce(&cheesedb::Agent) -> Result<Vec<cheesedb::Hit>, cheesedb::Error> + Send,
    ) -> PyResult<Vec<Hit>> {
        Ok(self.call(py, action)?.into_iter().map(Hit::from).collect())
    }
}

#[pymethods]
impl Agent {
    /// The name this agent was created with.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Whether the agent is encrypted: its contents, lot labels and vectors sealed under keys
    /// derived from its token (made with create_agent(name, encrypted=True), or converted by
    /// encrypt_agent).
    #[getter]
    fn is_encrypted(&self, py: Python<'_>) -> PyResult<bool> {
        self.call(py, |handle| Ok(handle.is_encrypted()))
    }

    /// This agent's handle to the space named `name`, if it holds a role in it now (else
    /// UnknownSpaceError, the same for a non-member, a revoked member and a wrong name).
    #[pyo3(text_signature = "(self, name)")]
    fn space(&self, py: Python<'_>, name: String) -> PyResult<crate::space::Space> {
        self.call(py, |handle| handle.space(&name).map(|_| ()))?;
        Ok(crate::space::Space::new(self.slot.clone(), name))
    }

    /// Adds a source (a lot): a non-empty label and its content (str, stored as UTF-8, or
    /// bytes). Returns its id. Durable when it returns.
    #[pyo3(text_signature = "(self, label, content)")]
    fn add_lot(&self, py: Python<'_>, label: String, content: Content) -> PyResult<u64> {
        self.call(py, |handle| handle.add_lot(&label, &content.0)).map(cheesedb::Id::get)
    }

    /// Adds a memory learned through `legs`: a list of legs, each a list of parent ids (lots or
    /// memories) that must all stay alive for the leg to hold, such as [[a], [b, c]]. The
    /// memory lives while at least one leg holds. Returns its id. Durable when it returns.
    #[pyo3(text_signature = "(self, content, legs)")]
    fn remember(&self, py: Python<'_>, content: Content, legs: Legs) -> PyResult<u64> {
        self.call(py, |handle| handle.remember(&content.0, &legs.0)).map(cheesedb::Id::get)
    }

    /// The memories that `recall(id, mode)` would remove, ascending, without writing anything.
    /// mode "fair": a memory dies when none of its legs still holds; "strict": when the id is
    /// anywhere in its history.
    #[pyo3(signature = (id, mode = ModeArgument(Mode::Fair)), text_signature = "(self, id, mode='fair')")]
    fn preview_recall(&self, py: Python<'_>, id: IdArgument, mode: ModeArgument) -> PyResult<Vec<u64>> {
        let removed = self.call(py, |handle| handle.preview_recall(id.0, mode.0))?;
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
        let removed = self.call(py, |handle| handle.recall(id.0, mode.0, removal))?;
        Ok(removed.into_iter().map(cheesedb::Id::get).collect())
    }

    /// One lot or memory, read from disk and checked against its digest. A recalled one has
    /// alive False and content None.
    #[pyo3(text_signature = "(self, id)")]
    fn get(&self, py: Python<'_>, id: IdArgument) -> PyResult<Node> {
        self.call(py, |handle| handle.get(id.0)).map(Node::from)
    }

    /// As get(), but a recalled lot or memory keeps its content until it is erased or
    /// compacted away: for looking into what a recall hid. Not counted as a read.
    #[pyo3(text_signature = "(self, id)")]
    fn audit(&self, py: Python<'_>, id: IdArgument) -> PyResult<Node> {
        self.call(py, |handle| handle.audit(id.0)).map(Node::from)
    }

    /// The alive lots and memories, ascending by id.
    #[pyo3(text_signature = "(self)")]
    fn list(&self, py: Python<'_>) -> PyResult<Vec<Node>> {
        let nodes = self.call(py, |agent| {
            let mut ids = agent.lots()?;
            ids.extend(agent.memories()?);
            ids.sort_unstable();
            let mut nodes = Vec::with_capacity(ids.len());
            for id in ids {
                // `audit` rather than `get`: each `get` counts as a read of the session, and
                // listing is not reading. For an alive node the two agree.
                let node = agent.audit(id)?;
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
        self.search_with(py, |handle| handle.search(&query, limit.0))
    }

    /// Attaches a vector (a sequence of finite numbers, not all zero; one dimension per agent)
    /// to the lot or memory `id`, replacing any it had. Durable when it returns.
    #[pyo3(text_signature = "(self, id, vector)")]
    fn set_vector(&self, py: Python<'_>, id: IdArgument, vector: Vector) -> PyResult<()> {
        self.call(py, |handle| handle.set_vector(id.0, &vector.0))
    }

    /// The lots and memories whose vectors are nearest to `vector` by cosine, best first, at
    /// most `limit`.
    #[pyo3(signature = (vector, limit = Limit(10)), text_signature = "(self, vector, limit=10)")]
    fn search_vector(&self, py: Python<'_>, vector: Vector, limit: Limit) -> PyResult<Vec<Hit>> {
        self.search_with(py, |handle| handle.search_vector(&vector.0, limit.0))
    }

    /// A keyword search and a vector search fused by reciprocal rank, best first, at most
    /// `limit`.
    #[pyo3(signature = (query, vector, limit = Limit(10)), text_signature = "(self, query, vector, limit=10)")]
    fn search_hybrid(&self, py: Python<'_>, query: String, vector: Vector, limit: Limit) -> PyResult<Vec<Hit>> {
        self.search_with(py, |handle| handle.search_hybrid(&query, &vector.0, limit.0))
    }

    /// One page of hits in one call, each with what is shown of it (a Found: id, score, kind,
    /// label or tracked_parents, content, trust, has_vector): at most `limit` alive lots and
    /// memories matching the words of `query`, best first (BM25), or with `vector`, words and
    /// vector fused by reciprocal rank. Hits below `least_trust` ("low" keeps all, "normal",
    /// "high"; under the same rules as trust()) or, when `among` is given, not among those ids
    /// are passed over while the hits are ranked, so the page is full whenever enough match.
    /// A vector that cannot be compared with the agent's (another dimension, say) is not
    /// raised: the page is ranked by words, and its vector_refused holds the exception. Through
    /// a server it is one request; the ids found count as read when reads are tracked.
    #[pyo3(
        signature = (query, vector = None, limit = Limit(10), least_trust = LeastTrust(TrustLevel::Low), among = None),
        text_signature = "(self, query, vector=None, limit=10, least_trust='low', among=None)"
    )]
    fn search_page(
        &self,
        py: Python<'_>,
        query: String,
        vector: Option<Vector>,
        limit: Limit,
        least_trust: LeastTrust,
        among: Option<Among>,
    ) -> PyResult<SearchPage> {
        let mut asked = SearchQuery::new(&query, limit.0).least_trust(least_trust.0);
        asked.vector = vector.map(|vector| vector.0);
        asked.among = among.map(|among| among.0);
        let page = self.call(py, |handle| handle.search_page(&asked))?;
        python_page(py, page)
    }

    /// Whether the lot or memory `id` has a vector.
    #[pyo3(text_signature = "(self, id)")]
    fn has_vector(&self, py: Python<'_>, id: IdArgument) -> PyResult<bool> {
        self.call(py, |handle| handle.has_vector(id.0))
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
        let fingerprint = self.call(py, |handle| match &kept {
            None => handle.verify(),
            Some(kept) => handle.verify_extends(kept),
        })?;
        Ok(fingerprint.to_string())
    }

    /// A batch: `with alice.batch() as batch:` collects writes (batch.add_lot,
    /// batch.remember, batch.set_vector) whose ids are final at once, and writes them all with
    /// one commit and one sync when the block ends. If the block raises, nothing is written.
    /// While it is open, writes to this agent from other threads wait for it, and writes
    /// through the agent on this thread are refused.
    #[pyo3(text_signature = "(self)")]
    fn batch(&self, py: Python<'_>) -> PyResult<Batch> {
        let handle = self.slot.handle()?;
        handle.check_same_process().into_python(py)?;
        Ok(Batch::new(handle))
    }

    /// Rewrites the agent's files without the text of recalled lots and memories.
    #[pyo3(text_signature = "(self)")]
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, cheesedb::Agent::compact)
    }

    /// What opening this agent found and did (segments, records, repairs), as a dict.
    #[pyo3(text_signature = "(self)")]
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = self.call(py, |handle| Ok(handle.report()))?;
        report_dict(py, &report)
    }

    /// How far to believe the lot or memory `id`: "low", "normal" or "high". A lot has its
    /// label's level under the trust rules (through a server, its data folder's trust.toml;
    /// for a local store, the trust_rules it was opened with; every label "normal" without
    /// them); a memory has the best over its legs of the worst of each leg's parents.
    #[pyo3(text_signature = "(self, id)")]
    fn trust(&self, py: Python<'_>, id: IdArgument) -> PyResult<&'static str> {
        let level = self.call(py, |handle| handle.trust(id.0))?;
        Ok(level.as_str())
    }

    /// Turns read tracking on or off for this handle (off when opened). While on, every id
    /// that get() and the searches return becomes a parent of the next memory remembered
    /// through this handle, in each of its legs, so recalling what was read recalls it too
    /// (list() does not count as reading). Turning it off forgets what was read.
    #[pyo3(text_signature = "(self, on)")]
    fn track_reads(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.call(py, |handle| handle.track_reads(on))
    }

    /// Closes this handle; later calls raise ClosedError. When it is the last handle of the
    /// agent, the snapshot that is due is written now.
    #[pyo3(text_signature = "(self)")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.slot.take() {
            Some(handle) => py.detach(|| handle.close()).into_python(py),
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
        exit_after(self.close(py), exception_type)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.slot.handle().is_ok() { "" } else { ", closed" };
        format!("Agent(name={}{state})", python_repr(py, &self.name))
    }
}
