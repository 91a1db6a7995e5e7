//! [`Client`]: the connections to a memory server (`cheesedb serve`), with the methods of
//! [`Store`](crate::Store) and [`Agent`](crate::Agent) over its socket. A store made by
//! [`Store::connect`](crate::Store::connect) runs on them; before that existed, programs used
//! them directly, which they still may (deprecated).
#![allow(deprecated)] // The deprecated types are this module's own.

mod agent;
mod batch;
mod connection;
mod peer;
mod readable;
mod socket;

// The server probes a socket path the way a client reaches it.
#[cfg(feature = "server")]
pub(crate) use socket::connect as connect_to_socket;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cheesedb_core::{Error, Fingerprint, LeftBehind, Report, Token};

use crate::process::OpeningProcess;
use crate::protocol::{Request, Response, WireSpaceMembers, SOCKET_FILE};

pub use agent::ClientAgent;
pub use batch::ClientBatch;
use connection::Connection;

/// Connections a client keeps open between store requests; more are opened while threads
/// need them, and closed after.
const IDLE_CONNECTIONS_MAX: usize = 4;

/// What the server tells of an agent as it opens it.
#[derive(Debug, Clone)]
pub(crate) struct OpenedFacts {
    /// Whether the agent is encrypted.
    pub(crate) encrypted: bool,
    /// What the server's open of the agent found and did.
    pub(crate) report: Report,
}

/// A connection to a memory server, blocking, shared between threads (`Send + Sync + Clone`).
///
/// Each [`ClientAgent`] has a connection of its own: its session (the agent it opened, its
/// read tracking, its open batch) lives on the server beside that connection, and requests of
/// different agent handles run in parallel, one server thread each, so writes of many clients
/// share the engine's group commit. Store requests (`create_agent`, ...) use a small pool of
/// connections.
///
/// A client belongs to the process that connected. In a child forked from it, every method of
/// the client and of the agents it opened fails with `Error::ForkedProcess` and nothing is sent
/// on the parent's connections; connect again in the child.
///
/// Deprecated: [`Store::connect`](crate::Store::connect) gives a [`Store`](crate::Store) with
/// the same methods, whose agents are [`Agent`](crate::Agent)s like those of a store open in
/// this process.
///
/// ```no_run
/// # #![allow(deprecated)]
/// # fn main() -> Result<(), cheesedb::Error> {
/// let client = cheesedb::Client::connect("/home/me/.cheesedb")?;
/// let token = client.create_agent("alice")?;
/// let alice = client.open_agent(&token)?;
/// let lot = alice.add_lot("note", b"rain in Pune")?;
/// assert_eq!(alice.get(lot)?.content(), Some(&b"rain in Pune"[..]));
/// # Ok(())
/// # }
/// ```
#[deprecated(since = "1.1.0", note = "use `Store::connect`, whose store and agents are those of a local store")]
#[derive(Clone)]
pub struct Client {
    shared: Arc<ClientShared>,
}

struct ClientShared {
    socket: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// Checked before the pool's lock, which a thread of the parent may have held at a fork.
    process: OpeningProcess,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Client").field("socket", &self.shared.socket).finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to the server listening at `path`: its socket, or the data folder holding
    /// [`SOCKET_FILE`]. One connection is made now, so a missing server shows at once.
    ///
    /// # Errors
    ///
    /// `Error::ServerUnavailable` when no server answers there; `Error::SocketRefused` when a
    /// symbolic link or a socket of another user stands at the socket's name (a client never
    /// follows a link to a server, which could be another folder's); `Error::VersionMismatch` for
    /// a server of another protocol version; `Error::PeerRefused` for a server of another user
    /// (other than root); `Error::ServerBusy` when it serves all the connections it allows.
    pub fn connect(path: impl AsRef<Path>) -> Result<Client, Error> {
        let path = path.as_ref();
        let socket = if path.is_dir() { path.join(SOCKET_FILE) } else { path.to_path_buf() };
        let first = Connection::open(&socket)?;
        let process = first.opening_process().clone();
        Ok(Client { shared: Arc::new(ClientShared { socket, idle: Mutex::new(vec![first]), process }) })
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that connected, as every
    /// other method does then.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that connected.
    pub fn check_same_process(&self) -> Result<(), Error> {
        self.shared.process.check()
    }

    /// The socket this client connects to.
    #[must_use]
    pub fn socket_path(&self) -> &Path {
        &self.shared.socket
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.shared.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle connection, or a new one; in the process that connected only.
    fn take_connection(&self) -> Result<Connection, Error> {
        self.shared.process.check()?;
        let idle = self.idle().pop();
        match idle {
            Some(connection) => Ok(connection),
            None => Connection::open(&self.shared.socket),
        }
    }

    /// Runs `action` on a connection of the pool, and gives the connection back unless it broke.
    fn with_connection<T>(&self, action: impl FnOnce(&mut Connection) -> Result<T, Error>) -> Result<T, Error> {
        let mut connection = self.take_connection()?;
        let outcome = action(&mut connection);
        if !connection.is_broken() {
            let mut idle = self.idle();
            if idle.len() < IDLE_CONNECTIONS_MAX {
                idle.push(connection);
            }
        }
        outcome
    }

    /// Opens the agent that `token` belongs to, on a connection of its own; as
    /// [`Store::open_agent`](crate::Store::open_agent).
    ///
    /// # Errors
    ///
    /// `Error::UnknownToken` when no agent has that token (a wrong token gets the same
    /// answer); the errors of [`Client::connect`] when a new connection is needed; otherwise as
    /// [`Store::open_agent`](crate::Store::open_agent).
    pub fn open_agent(&self, token: &Token) -> Result<ClientAgent, Error> {
        self.open_agent_telling(token).map(|(agent, _)| agent)
    }

    /// Opens the agent as [`Client::open_agent`] does, with what the server told of it.
    pub(crate) fn open_agent_telling(&self, token: &Token) -> Result<(ClientAgent, OpenedFacts), Error> {
        let mut connection = self.take_connection()?;
        match connection.call(&Request::OpenAgent { token: *token.as_bytes() })? {
            Response::AgentOpened { encrypted, report } => {
                Ok((ClientAgent::new(connection), OpenedFacts { encrypted, report }))
            }
            _ => Err(connection.unexpected()),
        }
    }

    /// Creates an agent; as [`Store::create_agent`](crate::Store::create_agent).
    ///
    /// # Errors
    ///
    /// As [`Store::create_agent`](crate::Store::create_agent), and the errors of a connection
    /// (`Error::ConnectionLost`, ...).
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        self.create_agent_with(name, false)
    }

    /// Creates an encrypted agent; as
    /// [`Store::create_encrypted_agent`](crate::Store::create_encrypted_agent).
    ///
    /// # Errors
    ///
    /// As [`Store::create_agent`](crate::Store::create_agent), and the errors of a connection
    /// (`Error::ConnectionLost`, ...).
    pub fn create_encrypted_agent(&self, name: &str) -> Result<Token, Error> {
        self.create_agent_with(name, true)
    }

    fn create_agent_with(&self, name: &str, encrypted: bool) -> Result<Token, Error> {
        self.with_connection(|connection| {
            match connection.call(&Request::CreateAgent { name: String::from(name), encrypted })? {
                Response::Token(bytes) => Ok(Token::from_bytes(bytes)),
                _ => Err(connection.unexpected()),
            }
        })
    }

    /// Converts the plaintext agent `token` opens into an encrypted one; as
    /// [`Store::encrypt_agent`](crate::Store::encrypt_agent). No connection may have the agent
    /// open meanwhile.
    ///
    /// # Errors
    ///
    /// As [`Store::encrypt_agent`](crate::Store::encrypt_agent) (`Error::AgentInUse` while a
    /// connection has it open), and the errors of a connection: a broken one during the
    /// conversion is `Error::ConnectionLost` with its outcome unknown.
    pub fn encrypt_agent(&self, token: &Token) -> Result<Fingerprint, Error> {
        self.with_connection(|connection| {
            match connection.call(&Request::EncryptAgent { token: *token.as_bytes() })? {
                Response::Fingerprint { records, chain } => Ok(Fingerprint { records, chain }),
                _ => Err(connection.unexpected()),
            }
        })
    }

    /// The name of the agent `token` opens, without opening it; as
    /// [`Store::agent_name_of`](crate::Store::agent_name_of).
    ///
    /// # Errors
    ///
    /// As [`Store::agent_name_of`](crate::Store::agent_name_of), and the errors of a connection.
    pub fn agent_name_of(&self, token: &Token) -> Result<String, Error> {
        self.with_connection(|connection| {
            match connection.call(&Request::AgentNameOf { token: *token.as_bytes() })? {
                Response::Name(name) => Ok(name),
                _ => Err(connection.unexpected()),
            }
        })
    }

    /// Whether the agent named `name` is encrypted; as
    /// [`Store::is_encrypted`](crate::Store::is_encrypted).
    ///
    /// # Errors
    ///
    /// As [`Store::is_encrypted`](crate::Store::is_encrypted), and the errors of a connection.
    pub fn is_encrypted(&self, name: &str) -> Result<bool, Error> {
        self.with_connection(|connection| {
            match connection.call(&Request::AgentIsEncrypted { name: String::from(name) })? {
                Response::Flag(flag) => Ok(flag),
                _ => Err(connection.unexpected()),
            }
        })
    }

    /// The names of all agents; as [`Store::agent_names`](crate::Store::agent_names).
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        self.with_connection(|connection| {
            connection.call_list(&Request::AgentNames, |response| match response {
                Response::Names { names, more } => Some((names, more)),
                _ => None,
            })
        })
    }

    /// Deletes an agent; as [`Store::delete_agent`](crate::Store::delete_agent).
    ///
    /// # Errors
    ///
    /// As [`Store::delete_agent`](crate::Store::delete_agent), and the errors of a connection.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        self.with_connection(|connection| {
            match connection.call(&Request::DeleteAgent { name: String::from(name) })? {
                Response::Done => Ok(()),
                _ => Err(connection.unexpected()),
            }
        })
    }

    /// What deleting agents left behind; as [`Store::left_behind`](crate::Store::left_behind).
    ///
    /// # Errors
    ///
    /// The errors of a connection (`Error::ConnectionLost`, ...).
    pub fn left_behind(&self) -> Result<Vec<LeftBehind>, Error> {
        self.with_connection(|connection| {
            let entries = connection.call_list(&Request::LeftBehind, |response| match response {
                Response::LeftBehind { entries, more } => Some((entries, more)),
                _ => None,
            })?;
            Ok(entries.into_iter().map(LeftBehind::from).collect())
        })
    }

    /// The names of the store's spaces; as [`Store::space_names`](crate::Store::space_names).
    pub(crate) fn space_names(&self) -> Result<Vec<String>, Error> {
        self.with_connection(|connection| {
            connection.call_list(&Request::SpaceNames, |response| match response {
                Response::Names { names, more } => Some((names, more)),
                _ => None,
            })
        })
    }

    /// The store's spaces with their members; as [`Store::spaces`](crate::Store::spaces).
    pub(crate) fn spaces(&self) -> Result<Vec<WireSpaceMembers>, Error> {
        self.with_connection(|connection| {
            connection.call_list(&Request::Spaces, |response| match response {
                Response::Spaces { spaces, more } => Some((spaces, more)),
                _ => None,
            })
        })
    }
}
