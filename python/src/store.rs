//! `Store`: a folder of agents, opened from Python.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use cheesedb::Token;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::agent::Agent;
use crate::agent_slot::{lock, AgentSlot};
use crate::convert::TrustRulesArgument;
use crate::errors::{closed, exit_after, to_python, IntoPython};
use crate::node::python_repr;

/// A store folder holding any number of agents: `cheesedb.Store(path)`.
///
/// Opening creates the folder (private to this user) if needed and locks it: a second Store on
/// the same folder, in this process or another, raises LockedError until this one is closed.
/// With read_only=True nothing is written or locked and every write raises ReadOnlyError.
/// trust_rules, a dict of lot label to "low", "normal" or "high", sets what Agent.trust
/// answers (every label "normal" without it; a memory server reads them from trust.toml).
/// Also a context manager: `with cheesedb.Store(path) as store:` closes it at the end.
#[pyclass(module = "cheesedb", frozen, subclass)]
pub(crate) struct Store {
    path: PathBuf,
    read_only: bool,
    /// What the Python class is called in messages: "store" or "client".
    noun: &'static str,
    /// The store, local or served, until it is closed.
    store: Mutex<Option<cheesedb::Store>>,
    /// Each agent opened from it, until the agent or the store is closed.
    agents: Mutex<Vec<Weak<AgentSlot>>>,
}

impl Store {
    fn opened(path: PathBuf, read_only: bool, noun: &'static str, store: cheesedb::Store) -> Store {
        Store { path, read_only, noun, store: Mutex::new(Some(store)), agents: Mutex::default() }
    }

    /// A store held by the memory server at `socket`, for a `Client`.
    pub(crate) fn served(store: cheesedb::Store) -> Store {
        let path = store.socket_path().map(PathBuf::from).unwrap_or_default();
        let read_only = store.is_read_only();
        Store::opened(path, read_only, "client", store)
    }

    /// Whether the store is still open.
    pub(crate) fn is_open(&self) -> bool {
        lock(&self.store).is_some()
    }

    /// A clone of the store, for one call.
    fn handle(&self) -> PyResult<cheesedb::Store> {
        lock(&self.store).clone().ok_or_else(|| closed(self.noun))
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path, *, read_only = false, trust_rules = None, auto_compact_dead_nodes = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        read_only: bool,
        trust_rules: Option<TrustRulesArgument>,
        auto_compact_dead_nodes: Option<u64>,
    ) -> PyResult<Store> {
        let rules = trust_rules.map(|rules| rules.0).unwrap_or_default();
        let mut options = cheesedb::Options::default();
        if let Some(nodes) = auto_compact_dead_nodes {
            options = options.auto_compact_dead_nodes(nodes);
        }
        let builder = cheesedb::Store::builder(&path).read_only(read_only).trust_rules(rules).options(options);
        let opened = py.detach(|| builder.open()).into_python(py)?;
        Ok(Store::opened(path, read_only, "store", opened))
    }

    /// The store folder, as given; for a Client, the server's socket.
    #[getter]
    pub(crate) fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// Whether the store was opened read-only.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// Creates an agent named `name` (non-empty, at most 256 bytes of UTF-8) and returns its
    /// token, the only way to open it. The token is shown only now: the store keeps its hash.
    /// With `encrypted=True` the agent's contents, lot labels and vectors are sealed under keys
    /// derived from the token, so the store folder alone reveals none of them, and an Erase
    /// destroys the keys of what it erases; everything else works the same.
    #[pyo3(signature = (name, encrypted = false), text_signature = "(self, name, encrypted=False)")]
    fn create_agent(&self, py: Python<'_>, name: String, encrypted: bool) -> PyResult<String> {
        let store = self.handle()?;
        let token = py
            .detach(|| if encrypted { store.create_encrypted_agent(&name) } else { store.create_agent(&name) })
            .into_python(py)?;
        Ok(token.to_string())
    }

    /// Converts the plaintext agent that `token` opens into an encrypted one, with the same name,
    /// token, ids and history; the plaintext files are overwritten with zeros and removed before
    /// it returns, and a crash at any point leaves the agent whole, plaintext or encrypted.
    /// Returns the new head fingerprint: the history is chained anew over the sealed records, so
    /// fingerprints kept before no longer match. Every handle of the agent must be closed first
    /// (AgentInUseError otherwise); an encrypted agent raises AlreadyEncryptedError.
    #[pyo3(text_signature = "(self, token)")]
    fn encrypt_agent(&self, py: Python<'_>, token: String) -> PyResult<String> {
        let store = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let fingerprint = py.detach(|| store.encrypt_agent(&token)).into_python(py)?;
        Ok(fingerprint.to_string())
    }

    /// Opens the agent that `token` belongs to. Several handles of one agent share its engine.
    #[pyo3(text_signature = "(self, token)")]
    fn open_agent(&self, py: Python<'_>, token: String) -> PyResult<Agent> {
        let store = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let (handle, name) = py
            .detach(|| {
                let handle = store.open_agent(&token)?;
                let name = handle.name()?;
                Ok((handle, name))
            })
            .into_python(py)?;
        let slot = Arc::new(AgentSlot::new(handle));
        let mut slots = lock(&self.agents);
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        drop(slots);
        Ok(Agent::new(slot, name))
    }

    /// Creates the space named `name` (as an agent's name, without ':' or ','), with
    /// `first_admin`, an agent of this store, as its first member and admin; returns that
    /// agent's handle to it.
    #[pyo3(text_signature = "(self, name, first_admin)")]
    fn create_space(&self, py: Python<'_>, name: String, first_admin: &Agent) -> PyResult<crate::space::Space> {
        let store = self.handle()?;
        let admin = first_admin.slot().handle()?;
        py.detach(|| store.create_space(&name, &admin).map(|_| ())).into_python(py)?;
        Ok(crate::space::Space::new(first_admin.slot().clone(), name))
    }

    /// The names of the spaces, in the order they were created.
    #[pyo3(text_signature = "(self)")]
    fn space_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let store = self.handle()?;
        py.detach(|| store.space_names()).into_python(py)
    }

    /// Deletes the agent named `name` and every file made for it. Its open handles raise
    /// AgentDeletedError from then on.
    #[pyo3(text_signature = "(self, name)")]
    fn delete_agent(&self, py: Python<'_>, name: String) -> PyResult<()> {
        let store = self.handle()?;
        py.detach(|| store.delete_agent(&name)).into_python(py)
    }

    /// The names of all agents, in the order they were created.
    #[pyo3(text_signature = "(self)")]
    fn agent_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let store = self.handle()?;
        py.detach(|| store.agent_names()).into_python(py)
    }

    /// Closes the store and every agent opened from it, releasing the folder; later calls
    /// raise ClosedError. A batch still open keeps the folder until it ends. For a Client, the
    /// agents' connections (and so their sessions) are closed and the server goes on serving
    /// others. In a process forked from the one that opened the store, this one's copies are
    /// let go without writing anything, and ForkedProcessError says so.
    #[pyo3(text_signature = "(self)")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let store = lock(&self.store).take();
        let forked = store.as_ref().map_or(Ok(()), cheesedb::Store::check_same_process);
        let agents: Vec<cheesedb::Agent> = std::mem::take(&mut *lock(&self.agents))
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|slot| slot.take())
            .collect();
        py.detach(|| {
            // Every agent is closed even when one fails; a fork's refusal comes first, then the
            // first failure.
            let mut first_failure = Ok(());
            for agent in agents {
                let closed = agent.close();
                if first_failure.is_ok() {
                    first_failure = closed;
                }
            }
            drop(store);
            forked.and(first_failure)
        })
        .into_python(py)
    }

    fn __enter__(this: Bound<'_, Self>) -> Bound<'_, Self> {
        this
    }

    /// Closes the store; an error of closing is raised only when the block itself did not
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
        let state = if self.is_open() { "" } else { ", closed" };
        let read_only = if self.read_only { "True" } else { "False" };
        let path = python_repr(py, &self.path.display().to_string());
        format!("Store(path={path}, read_only={read_only}{state})")
    }
}
