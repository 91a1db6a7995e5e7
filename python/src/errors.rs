//! The exceptions of the package and the one place that turns a `cheesedb::Error` into one.
//!
//! Every exception derives from `cheesedb.Error`, so `except cheesedb.Error` catches all that
//! the package raises for a refusal of the engine. The message is the engine's own one-line
//! description; the facts it carries (a file and offset, an id) are attributes as well, so a
//! caller need not parse text.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyType;

create_exception!(cheesedb, Error, PyException, "The base of every error cheesedb raises.");
create_exception!(
    cheesedb,
    LockedError,
    Error,
    "Another open store holds this folder: another process, or another Store object in this one."
);
create_exception!(
    cheesedb,
    CorruptError,
    Error,
    "Stored bytes failed a check. Attributes: file (relative to the store folder), offset (where the \
     damage starts), reason (which check failed)."
);
create_exception!(
    cheesedb,
    StorageError,
    Error,
    "The disk or the operating system refused an operation before anything was written. Attributes: \
     operation, path, kind (such as 'no space left' or 'permission denied')."
);
create_exception!(
    cheesedb,
    OutcomeUnknownError,
    Error,
    "A write or sync failed after some of it may have reached the disk: check with a read before \
     retrying. Attributes as StorageError. The agent accepts no writes until reopened."
);
create_exception!(
    cheesedb,
    PoisonedError,
    Error,
    "An earlier write or sync failed on this agent; it accepts no writes until it is opened again."
);
create_exception!(cheesedb, UnknownIdError, Error, "No lot or memory of this agent has the id. Attribute: id.");
create_exception!(
    cheesedb,
    DeadParentError,
    Error,
    "A parent named in a leg was recalled; recalled nodes cannot be built on. Attribute: id."
);
create_exception!(
    cheesedb,
    AlreadyRecalledError,
    Error,
    "The id was recalled already and this recall would change nothing. Attribute: id."
);
create_exception!(
    cheesedb,
    InvalidArgumentError,
    Error,
    "An argument cannot be used: past a limit, an empty leg or no leg, an empty or reserved name, a \
     vector that is empty or holds nan, a mode other than 'fair' or 'strict', an id or limit that is \
     negative or past 2**64, or a write through the agent while its batch is open on this thread."
);
create_exception!(
    cheesedb,
    UnknownAgentError,
    Error,
    "No agent has this name, or the token is unknown to this store or is not a cheesedb token."
);
create_exception!(cheesedb, AgentExistsError, Error, "An agent with this name exists already.");
create_exception!(cheesedb, SpaceExistsError, Error, "A space with this name exists already. Attribute: name.");
create_exception!(
    cheesedb,
    UnknownSpaceError,
    Error,
    "The agent reaches no space of this name: there is none, or the agent holds no role in it (one \
     answer for both). Attribute: name."
);
create_exception!(
    cheesedb,
    RoleTooLowError,
    Error,
    "The member's role in the space allows less than the call needs. Attributes: held, needed."
);
create_exception!(cheesedb, LastAdminError, Error, "The change would leave the space without an admin.");
create_exception!(cheesedb, AgentDeletedError, Error, "The agent was deleted while this handle was open.");
create_exception!(cheesedb, ReadOnlyError, Error, "The store is open read-only; every write is refused.");
create_exception!(
    cheesedb,
    RepairNeededError,
    Error,
    "A read-only open would need a repair that writes; open the store read-write once."
);
create_exception!(
    cheesedb,
    FolderNotPrivateError,
    Error,
    "The store folder may be written by other users or is owned by another user."
);
create_exception!(
    cheesedb,
    HistoryMismatchError,
    Error,
    "The agent's history does not pass through a kept fingerprint: records were rewritten or removed."
);
create_exception!(
    cheesedb,
    BatchConflictError,
    Error,
    "Another write reached the agent while a batch was open; nothing of the batch was written."
);
create_exception!(
    cheesedb,
    ServerUnavailableError,
    Error,
    "No memory server answers at the socket: none runs for the folder, or the path is not its socket. \
     Nothing was sent. Attributes: path, reason."
);
create_exception!(
    cheesedb,
    ConnectionLostError,
    Error,
    "The connection to the memory server broke before its answer: the server stopped or timed this \
     client out. Attributes: reason, write_in_flight (True when a write was sent: it may or may not \
     be stored, so check with a read before retrying). Open the agent again."
);
create_exception!(
    cheesedb,
    VersionMismatchError,
    Error,
    "The memory server speaks another version of the protocol. Attributes: client, server."
);
create_exception!(
    cheesedb,
    FrameTooLargeError,
    Error,
    "A request or answer is larger than the protocol allows in one message; nothing was sent. \
     Attributes: size_bytes, limit_bytes."
);
create_exception!(
    cheesedb,
    MalformedMessageError,
    Error,
    "The memory server answered with bytes that are not a message of the protocol, or refused a \
     request as one. Attribute: reason."
);
create_exception!(
    cheesedb,
    ServerBusyError,
    Error,
    "The memory server serves as many connections as it allows; try again later. Attribute: \
     connections_max."
);
create_exception!(
    cheesedb,
    PeerRefusedError,
    Error,
    "The other end of the socket runs as a user this one may not trust (neither the same user nor \
     root). Attribute: uid."
);
create_exception!(
    cheesedb,
    AgentInUseError,
    Error,
    "The agent is open (a handle of it, here or on the memory server), and encrypting it needs it \
     closed: close every handle of it first. Attribute: name."
);
create_exception!(
    cheesedb,
    AlreadyEncryptedError,
    Error,
    "The agent is encrypted already: there is nothing to convert. Attribute: name."
);
create_exception!(
    cheesedb,
    ForkedProcessError,
    Error,
    "The store, agent or client was opened in another process, and this one was forked from it \
     (os.fork, multiprocessing with the fork start method): every call is refused and nothing is \
     written or sent, so the two processes never write the same files or read each other's \
     answers. Open the store, or connect, in this process instead. Attributes: \
     opening_process_id, current_process_id."
);
create_exception!(
    cheesedb,
    StoredNotShippedError,
    Error,
    "A memory server that answers writes only once they are in the object store (serve \
     --wait-for-ship) stored the write but could not ship it: it is kept, and must not be made \
     again; replication ships it later. Attributes: id (None for a write that makes no node), reason."
);
create_exception!(
    cheesedb,
    SocketRefusedError,
    Error,
    "The server's socket is not one this client may trust (a symbolic link at its name, or a socket \
     of another user): nothing was sent. Attributes: path, problem."
);
create_exception!(cheesedb, ClosedError, Error, "The store, agent or batch was closed; open it again.");
create_exception!(
    cheesedb,
    InternalError,
    Error,
    "A rule cheesedb keeps for itself was found broken: a bug of cheesedb, please report it."
);

/// Adds every exception class to the module.
///
/// # Errors
///
/// The error of adding an attribute to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("Error", py.get_type::<Error>())?;
    module.add("LockedError", py.get_type::<LockedError>())?;
    module.add("CorruptError", py.get_type::<CorruptError>())?;
    module.add("StorageError", py.get_type::<StorageError>())?;
    module.add("OutcomeUnknownError", py.get_type::<OutcomeUnknownError>())?;
    module.add("PoisonedError", py.get_type::<PoisonedError>())?;
    module.add("UnknownIdError", py.get_type::<UnknownIdError>())?;
    module.add("DeadParentError", py.get_type::<DeadParentError>())?;
    module.add("AlreadyRecalledError", py.get_type::<AlreadyRecalledError>())?;
    module.add("InvalidArgumentError", py.get_type::<InvalidArgumentError>())?;
    module.add("UnknownAgentError", py.get_type::<UnknownAgentError>())?;
    module.add("AgentExistsError", py.get_type::<AgentExistsError>())?;
    module.add("SpaceExistsError", py.get_type::<SpaceExistsError>())?;
    module.add("UnknownSpaceError", py.get_type::<UnknownSpaceError>())?;
    module.add("RoleTooLowError", py.get_type::<RoleTooLowError>())?;
    module.add("LastAdminError", py.get_type::<LastAdminError>())?;
    module.add("AgentDeletedError", py.get_type::<AgentDeletedError>())?;
    module.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    module.add("RepairNeededError", py.get_type::<RepairNeededError>())?;
    module.add("FolderNotPrivateError", py.get_type::<FolderNotPrivateError>())?;
    module.add("HistoryMismatchError", py.get_type::<HistoryMismatchError>())?;
    module.add("BatchConflictError", py.get_type::<BatchConflictError>())?;
    module.add("ServerUnavailableError", py.get_type::<ServerUnavailableError>())?;
    module.add("ConnectionLostError", py.get_type::<ConnectionLostError>())?;
    module.add("VersionMismatchError", py.get_type::<VersionMismatchError>())?;
    module.add("FrameTooLargeError", py.get_type::<FrameTooLargeError>())?;
    module.add("MalformedMessageError", py.get_type::<MalformedMessageError>())?;
    module.add("ServerBusyError", py.get_type::<ServerBusyError>())?;
    module.add("PeerRefusedError", py.get_type::<PeerRefusedError>())?;
    module.add("AgentInUseError", py.get_type::<AgentInUseError>())?;
    module.add("AlreadyEncryptedError", py.get_type::<AlreadyEncryptedError>())?;
    module.add("ForkedProcessError", py.get_type::<ForkedProcessError>())?;
    module.add("StoredNotShippedError", py.get_type::<StoredNotShippedError>())?;
    module.add("SocketRefusedError", py.get_type::<SocketRefusedError>())?;
    module.add("ClosedError", py.get_type::<ClosedError>())?;
    module.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

/// The attributes an exception carries besides its message.
type Facts = Vec<(&'static str, Py<PyAny>)>;

/// The exception for `error`, with its message and its facts as attributes.
pub(crate) fn to_python(py: Python<'_>, error: cheesedb::Error) -> PyErr {
    use cheesedb::Error as E;
    let message = error.to_string();
    let (exception, facts): (PyErr, Facts) = match &error {
        E::Locked => (LockedError::new_err(message), Vec::new()),
        E::Corrupt { file, offset, reason } => (
            CorruptError::new_err(message),
            vec![("file", text(py, file)), ("offset", number(py, *offset)), ("reason", text(py, reason.describe()))],
        ),
        E::Io { operation, path, kind, .. } => {
            (StorageError::new_err(message), storage_facts(py, operation.describe(), path, kind.describe()))
        }
        E::OutcomeUnknown { operation, path, kind, .. } => {
            (OutcomeUnknownError::new_err(message), storage_facts(py, operation.describe(), path, kind.describe()))
        }
        E::Poisoned => (PoisonedError::new_err(message), Vec::new()),
        E::Internal { .. } => (InternalError::new_err(message), Vec::new()),
        E::UnknownId { id } => (UnknownIdError::new_err(message), vec![("id", number(py, id.get()))]),
        E::DeadParent { id } => (DeadParentError::new_err(message), vec![("id", number(py, id.get()))]),
        E::AlreadyRecalled { id } => (AlreadyRecalledError::new_err(message), vec![("id", number(py, id.get()))]),
        E::NoLegs
        | E::EmptyLeg { .. }
        | E::LimitExceeded { .. }
        | E::InvalidName { .. }
        | E::InvalidVector { .. }
        | E::BatchOpen => (InvalidArgumentError::new_err(message), Vec::new()),
        E::AgentExists { .. } => (AgentExistsError::new_err(message), Vec::new()),
        E::SpaceExists { name } => (SpaceExistsError::new_err(message), vec![("name", text(py, name))]),
        E::UnknownSpace { name } => (UnknownSpaceError::new_err(message), vec![("name", text(py, name))]),
        E::RoleTooLow { held, needed } => (
            RoleTooLowError::new_err(message),
            vec![("held", text(py, held.name())), ("needed", text(py, needed.name()))],
        ),
        E::LastAdmin => (LastAdminError::new_err(message), Vec::new()),
        E::UnknownAgent { .. } | E::UnknownToken | E::MalformedToken => {
            (UnknownAgentError::new_err(message), Vec::new())
        }
        E::AgentDeleted => (AgentDeletedError::new_err(message), Vec::new()),
        E::ReadOnly => (ReadOnlyError::new_err(message), Vec::new()),
        E::RepairNeeded { .. } => (RepairNeededError::new_err(message), Vec::new()),
        E::FolderNotPrivate { .. } => (FolderNotPrivateError::new_err(message), Vec::new()),
        E::HistoryMismatch { records } => {
            (HistoryMismatchError::new_err(message), vec![("records", number(py, *records))])
        }
        E::BatchConflict => (BatchConflictError::new_err(message), Vec::new()),
        E::ServerUnavailable { path, reason } => {
            (ServerUnavailableError::new_err(message), vec![("path", text(py, path)), ("reason", text(py, reason))])
        }
        E::ConnectionLost { reason, write_in_flight } => (
            ConnectionLostError::new_err(message),
            vec![("reason", text(py, reason)), ("write_in_flight", flag(py, *write_in_flight))],
        ),
        E::VersionMismatch { client, server } => (
            VersionMismatchError::new_err(message),
            vec![("client", number(py, u64::from(*client))), ("server", number(py, u64::from(*server)))],
        ),
        E::FrameTooLarge { size_bytes, limit_bytes } => (
            FrameTooLargeError::new_err(message),
            vec![("size_bytes", number(py, *size_bytes)), ("limit_bytes", number(py, *limit_bytes))],
        ),
        E::MalformedMessage { reason } => {
            (MalformedMessageError::new_err(message), vec![("reason", text(py, reason.describe()))])
        }
        E::ServerBusy { connections_max } => {
            (ServerBusyError::new_err(message), vec![("connections_max", number(py, *connections_max))])
        }
        E::PeerRefused { uid } => (PeerRefusedError::new_err(message), vec![("uid", number(py, u64::from(*uid)))]),
        E::AgentInUse { name } => (AgentInUseError::new_err(message), vec![("name", text(py, name))]),
        E::AlreadyEncrypted { name } => (AlreadyEncryptedError::new_err(message), vec![("name", text(py, name))]),
        E::ForkedProcess { opening_process_id, current_process_id } => (
            ForkedProcessError::new_err(message),
            vec![
                ("opening_process_id", number(py, u64::from(*opening_process_id))),
                ("current_process_id", number(py, u64::from(*current_process_id))),
            ],
        ),
        E::StoredNotShipped { id, reason } => {
            let id = id.map_or_else(|| py.None(), |id| number(py, id.get()));
            (StoredNotShippedError::new_err(message), vec![("id", id), ("reason", text(py, reason))])
        }
        E::SocketRefused { path, problem } => (
            SocketRefusedError::new_err(message),
            vec![("path", text(py, path)), ("problem", text(py, &problem.to_string()))],
        ),
        // A backend this package does not offer, or a condition newer than this package: the
        // base class still says what happened.
        _ => (Error::new_err(message), Vec::new()),
    };
    let value = exception.value(py);
    for (name, fact) in facts {
        // An exception instance takes attributes; should one be refused, the message still
        // says everything.
        let _ = value.setattr(name, fact);
    }
    exception
}

/// The facts of a storage failure.
fn storage_facts(py: Python<'_>, operation: &str, path: &str, kind: &str) -> Facts {
    vec![("operation", text(py, operation)), ("path", text(py, path)), ("kind", text(py, kind))]
}

/// A Python str.
fn text(py: Python<'_>, value: &str) -> Py<PyAny> {
    pyo3::types::PyString::new(py, value).into_any().unbind()
}

/// A Python bool.
fn flag(py: Python<'_>, value: bool) -> Py<PyAny> {
    pyo3::types::PyBool::new(py, value).to_owned().into_any().unbind()
}

/// A Python int.
fn number(py: Python<'_>, value: u64) -> Py<PyAny> {
    pyo3::types::PyInt::new(py, value).into_any().unbind()
}

/// An `InvalidArgumentError` with `message`.
pub(crate) fn invalid_argument(message: impl Into<String>) -> PyErr {
    InvalidArgumentError::new_err(message.into())
}

/// A `ClosedError` saying that `what` was closed.
pub(crate) fn closed(what: &str) -> PyErr {
    ClosedError::new_err(format!("the {what} is closed; open it again to use it"))
}

/// What `__exit__` returns after closing: the error of closing is raised only when the block
/// itself did not raise, so it never hides the block's own exception.
///
/// # Errors
/// The error of closing, when the block raised nothing.
pub(crate) fn exit_after(closed: PyResult<()>, exception_type: Option<&Bound<'_, PyType>>) -> PyResult<bool> {
    if exception_type.is_none() {
        closed?;
    }
    Ok(false)
}

/// Turns the result of an engine call into the result of a Python call.
pub(crate) trait IntoPython<T> {
    /// The value, or the exception for the engine's error.
    ///
    /// # Errors
    ///
    /// The exception [`to_python`] makes of the engine's error.
    fn into_python(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPython<T> for Result<T, cheesedb::Error> {
    fn into_python(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| to_python(py, error))
    }
}
