//! `Client`: a memory server (`cheesedb serve`) reached from Python, with the store's methods
//! over its socket; `connect(path)` makes one.

use std::path::PathBuf;
use std::sync::Mutex;

use cheesedb::Token;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::agent::Agent;
use crate::errors::{closed, to_python, IntoPython};
use crate::node::python_repr;
use crate::opened_agents::{lock, OpenedAgents};

/// Connects to the memory server (`cheesedb serve`) at `path`: its socket, or the data
/// folder holding `cheesedb.sock`. Returns a Client with the methods of a Store; the agents
/// it opens have the methods of a local one.
///
/// Raises ServerUnavailableError when no server answers there, VersionMismatchError for a
/// server of another protocol version, PeerRefusedError for a server run by another user,
/// ServerBusyError when it serves all the connections it allows.
#[pyfunction]
#[pyo3(text_signature = "(path)")]
pub(crate) fn connect(py: Python<'_>, path: PathBuf) -> PyResult<Client> {
    let client = py.detach(|| cheesedb::Store::connect(&path)).into_python(py)?;
    let socket = client.socket_path().map(|socket| socket.display().to_string()).unwrap_or_default();
    Ok(Client { socket, client: Mutex::new(Some(client)), agents: OpenedAgents::default() })
}

/// A connection to a memory server, made by `cheesedb.connect(path)`: the methods of a Store
/// (create_agent, open_agent, agent_names, delete_agent, encrypt_agent), each a request to the server, so
/// that several programs share one store. Shared between threads; each agent it opens has a
/// connection (and a session on the server) of its own. Also a context manager.
#[pyclass(module = "cheesedb", frozen)]
pub(crate) struct Client {
    socket: String,
    /// The store the server holds, reached through its socket.
    client: Mutex<Option<cheesedb::Store>>,
    /// The agents opened through this client, closed with it.
    agents: OpenedAgents,
}

impl Client {
    /// A clone of the connected store, for one call.
    fn handle(&self) -> PyResult<cheesedb::Store> {
        lock(&self.client).clone().ok_or_else(|| closed("client"))
    }
}

#[pymethods]
impl Client {
    /// The server's socket.
    #[getter]
    fn path(&self) -> &str {
        &self.socket
    }

    /// Creates an agent named `name`, encrypted with `encrypted=True`, and returns its token,
    /// as Store.create_agent.
    #[pyo3(signature = (name, encrypted = false), text_signature = "(self, name, encrypted=False)")]
    fn create_agent(&self, py: Python<'_>, name: String, encrypted: bool) -> PyResult<String> {
        let client = self.handle()?;
        let token = py
            .detach(|| if encrypted { client.create_encrypted_agent(&name) } else { client.create_agent(&name) })
            .into_python(py)?;
        Ok(token.to_string())
    }

    /// Converts the plaintext agent that `token` opens into an encrypted one and returns its new
    /// fingerprint, as Store.encrypt_agent; no connection may have the agent open meanwhile.
    #[pyo3(text_signature = "(self, token)")]
    fn encrypt_agent(&self, py: Python<'_>, token: String) -> PyResult<String> {
        let client = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let fingerprint = py.detach(|| client.encrypt_agent(&token)).into_python(py)?;
        Ok(fingerprint.to_string())
    }

    /// Opens the agent that `token` belongs to, on a connection of its own; a wrong token
    /// raises UnknownAgentError, as an unknown one does. Read tracking is off until
    /// agent.track_reads(True).
    #[pyo3(text_signature = "(self, token)")]
    fn open_agent(&self, py: Python<'_>, token: String) -> PyResult<Agent> {
        let client = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let (handle, name) = py
            .detach(|| {
                let handle = client.open_agent(&token)?;
                let name = handle.name()?;
                Ok((handle, name))
            })
            .into_python(py)?;
        Ok(self.agents.add(handle, name))
    }

    /// Deletes the agent named `name`, as Store.delete_agent.
    #[pyo3(text_signature = "(self, name)")]
    fn delete_agent(&self, py: Python<'_>, name: String) -> PyResult<()> {
        let client = self.handle()?;
        py.detach(|| client.delete_agent(&name)).into_python(py)
    }

    /// The names of all agents, in the order they were created.
    #[pyo3(text_signature = "(self)")]
    fn agent_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let client = self.handle()?;
        py.detach(|| client.agent_names()).into_python(py)
    }

    /// Closes the client and every agent opened through it (their connections, and so their
    /// sessions on the server); later calls raise ClosedError. The server goes on serving
    /// others. In a process forked from the one that connected, this one's copies of the
    /// connections are let go without a word to the server, and ForkedProcessError says so.
    #[pyo3(text_signature = "(self)")]
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let client = lock(&self.client).take();
        let agents = self.agents.take_all();
        let forked = client.as_ref().map_or(Ok(()), cheesedb::Store::check_same_process);
        py.detach(|| {
            // Closing a remote handle only closes its connection: it cannot fail but in a fork,
            // which the client's own check reports.
            agents.into_iter().for_each(|agent| drop(agent.close()));
            drop(client);
        });
        forked.into_python(py)
    }

    fn __enter__(this: Bound<'_, Self>) -> Bound<'_, Self> {
        this
    }

    /// Closes the client; an error of closing (only in a forked process) is raised only when
    /// the block itself did not raise, so it never hides the block's own exception.
    #[pyo3(signature = (exception_type = None, _exception = None, _traceback = None))]
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
        let state = if lock(&self.client).is_some() { "" } else { ", closed" };
        format!("Client(path={}{state})", python_repr(py, &self.socket))
    }
}
