//! `Client`: a memory server (`cheesedb serve`) reached from Python, a `Store` whose every call
//! is a request over the server's socket; `connect(path)` makes one.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::errors::IntoPython;
use crate::node::python_repr;
use crate::store::Store;

/// Connects to the memory server (`cheesedb serve`) at `path`: its socket, or the data
/// folder holding `cheesedb.sock`. Returns a Client, a Store whose agents have the methods
/// of local ones.
///
/// Raises ServerUnavailableError when no server answers there, VersionMismatchError for a
/// server of another protocol version, PeerRefusedError for a server run by another user,
/// ServerBusyError when it serves all the connections it allows.
#[pyfunction]
#[pyo3(text_signature = "(path)")]
pub(crate) fn connect(py: Python<'_>, path: PathBuf) -> PyResult<Py<Client>> {
    let store = py.detach(|| cheesedb::Store::connect(&path)).into_python(py)?;
    Py::new(py, PyClassInitializer::from(Store::served(store)).add_subclass(Client {}))
}

/// A connection to a memory server, made by `cheesedb.connect(path)`: a Store (create_agent,
/// open_agent, agent_names, delete_agent, encrypt_agent, close) whose every call is a request
/// to the server, so that several programs share one store; `path` is the server's socket.
/// Shared between threads; each agent it opens has a connection (and a session on the server)
/// of its own, and closing the client closes those connections, not the server. Also a
/// context manager.
#[pyclass(module = "cheesedb", frozen, extends = Store)]
pub(crate) struct Client {}

#[pymethods]
impl Client {
    fn __repr__(this: &Bound<'_, Self>) -> String {
        let store = this.as_super().get();
        let state = if store.is_open() { "" } else { ", closed" };
        let path = store.path();
        format!("Client(path={}{state})", python_repr(this.py(), &path))
    }
}
