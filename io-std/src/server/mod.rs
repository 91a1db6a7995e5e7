//! The memory server: one process holds the store and serves every client over a Unix socket
//! (`cheesedb serve` runs it; a program may run it too, with the `server` feature).
//!
//! The accepting thread checks each peer's credentials (its user must be the server's or
//! root) and the number of connections, then gives the connection a thread of its own
//! (`connection.rs`), which holds the connection's session (`session.rs`). Sessions of one agent share its
//! engine (the store opens each agent once), so their writes join in group commit. Every
//! request served on a session that opened an agent by its token (and, without a token, an
//! agent created or deleted) is written to the agent's access log with the peer's pid and uid,
//! by a thread of its own once the answer is sent, so no client waits for the log
//! (`access_writer.rs`); what a peer without a token asks writes nothing there.
//!
//! A slow client only holds its own thread: a frame must be whole, and an answer read, within
//! the client timeout. [`Stopper::stop`] stops the server: no new connection is accepted, each
//! connection's request in flight is finished and answered, the socket is removed and the
//! store closed.
//!
//! ```no_run
//! use cheesedb::server::{ServeOptions, Server};
//!
//! # fn main() -> Result<(), cheesedb::server::ServeError> {
//! let folder = std::path::Path::new("/data/cheesedb");
//! let server = Server::bind(folder, &folder.join(cheesedb::SOCKET_FILE), ServeOptions::default())?;
//! let stopper = server.stopper(); // hand it to whatever decides when to stop
//! # let _ = stopper;
//! server.run();
//! # Ok(())
//! # }
//! ```

mod access;
mod access_writer;
mod answers;
mod connection;
mod connections;
mod peer;
mod reply;
mod serve_error;
mod session;
mod settings;
mod shipping;
mod socket_file;
mod space_calls;
mod stop;
mod timed_stream;

use std::io::ErrorKind;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::access_log::AccessLogs;
use crate::protocol::{write_frame, Response};
use crate::{Error, Io, Store, TrustRules};
use access_writer::AccessRecorder;
use connections::Connections;
use peer::peer_of;
pub use serve_error::{ServeError, ServerThread, SocketStep};
pub use settings::{Settings, CLIENT_TIMEOUT_DEFAULT_MS, CONNECTIONS_MAX_DEFAULT};
pub use shipping::Replication;
use shipping::SharedReplicator;
pub use stop::Stopper;

/// How long the accepting thread waits to hand a refusal to a peer it will not serve.
const REFUSAL_WRITE_LIMIT: Duration = Duration::from_millis(100);
/// A pause after a failed accept (out of file descriptors, say), so a failure that lasts does
/// not spin.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(50);

/// What a server is started with besides its folder and socket.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// Its limits.
    pub settings: Settings,
    /// The backend the store is opened with.
    pub io: Io,
    /// Whether the store is opened read-only: every write is refused.
    pub read_only: bool,
    /// The rules trust requests are answered with (the command reads them from the data
    /// folder's `trust.toml`).
    pub trust_rules: TrustRules,
    /// Replication to run beside the clients, if any.
    pub replication: Option<Replication>,
}

/// What every connection's thread shares.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// The store, open for the server's whole life.
    pub(crate) store: Store,
    /// The server's limits.
    pub(crate) settings: Settings,
    /// The access logs.
    pub(crate) access: AccessRecorder,
    /// When writes are answered only once shipped to the object store: the replicator.
    pub(crate) wait_for_ship: Option<SharedReplicator>,
}

/// A memory server that holds its store and listens at its socket; [`Server::run`] serves.
#[derive(Debug)]
pub struct Server {
    state: Arc<ServerState>,
    listener: UnixListener,
    socket: PathBuf,
    stopping: Arc<AtomicBool>,
    stopper: Stopper,
    shipper: Option<JoinHandle<()>>,
}

impl Server {
    /// Opens the store in `folder`, starts its replication and access log, and listens at
    /// `socket` (mode 0600; a socket a killed server left is replaced). Clients can connect
    /// once this returns; they are served when [`Server::run`] is called.
    ///
    /// # Errors
    ///
    /// A [`ServeError`]: the store cannot be opened (`FolderInUse` when another process holds
    /// it, `AnotherServer` when that is a server at `socket`), the socket path cannot be
    /// claimed, or the access log or replication cannot start.
    pub fn bind(folder: &Path, socket: &Path, options: ServeOptions) -> Result<Server, ServeError> {
        let ServeOptions { settings, io, read_only, trust_rules, replication } = options;
        let store = open_store(folder, socket, io, read_only)?.with_trust_rules(trust_rules);
        let stopping = Arc::new(AtomicBool::new(false));
        let (wait_for_ship, shipper) = match replication {
            Some(replication) => {
                let (replicator, pace) = shipping::start(&store, replication).map_err(ServeError::Replication)?;
                let spawned = std::thread::Builder::new().name(String::from("cheesedb-replication")).spawn({
                    let (replicator, stopping) = (replicator.clone(), stopping.clone());
                    move || shipping::ship_until_stopped(&replicator, pace, &stopping)
                });
                let shipper = spawned
                    .map_err(|error| ServeError::Thread { thread: ServerThread::Replication, kind: error.kind() })?;
                (pace.wait_for_ship.then_some(replicator), Some(shipper))
            }
            None => (None, None),
        };
        let access = AccessRecorder::start(AccessLogs::open(folder)?)?;
        let listener = socket_file::claim(socket)?;
        let shared = listener.try_clone().map_err(|error| ServeError::Socket {
            socket: socket.to_path_buf(),
            step: SocketStep::Share,
            kind: error.kind(),
        })?;
        let stopper = Stopper::new(stopping.clone(), socket.to_path_buf(), shared);
        let state = Arc::new(ServerState { store, settings, access, wait_for_ship });
        Ok(Server { state, listener, socket: socket.to_path_buf(), stopping, stopper, shipper })
    }

    /// The way to stop this server from another thread.
    #[must_use]
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Serves clients until [`Stopper::stop`] is called, then finishes: each request in flight
    /// is answered, the socket removed, the access log synced, the last writes shipped.
    pub fn run(self) {
        let Server { state, listener, socket, stopping, stopper, shipper } = self;
        let connections = Arc::new(Connections::default());
        accept_until_stopped(&listener, &state, &connections, &stopping);
        drop(listener);
        drop(stopper);
        // The socket goes while the store's lock is still held, so a server started next cannot
        // have put its own socket there yet.
        socket_file::remove(&socket);
        connections.stop_reading();
        connections.wait_until_all_ended();
        state.access.finish();
        drop(state);
        // The last pass ships what the clients wrote before the stop.
        if let Some(shipper) = shipper {
            let _ = shipper.join();
        }
    }
}

/// Opens the store; when another process holds it, says whether that is a server.
fn open_store(folder: &Path, socket: &Path, io: Io, read_only: bool) -> Result<Store, ServeError> {
    match Store::builder(folder).io(io).read_only(read_only).open() {
        Ok(store) => Ok(store),
        Err(Error::Locked) => match socket_file::inspect(socket) {
            Ok(socket_file::Found::Live) => Err(ServeError::AnotherServer { socket: socket.to_path_buf() }),
            _ => Err(ServeError::FolderInUse { folder: folder.to_path_buf() }),
        },
        Err(error) => Err(ServeError::Store { folder: folder.to_path_buf(), error }),
    }
}

fn accept_until_stopped(
    listener: &UnixListener,
    state: &Arc<ServerState>,
    connections: &Arc<Connections>,
    stopping: &AtomicBool,
) {
    loop {
        let accepted = listener.accept();
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok((stream, _address)) => admit(stream, state, connections),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => std::thread::sleep(ACCEPT_RETRY_PAUSE),
        }
    }
}

/// Serves `stream` on a thread of its own, or refuses it with one error frame.
fn admit(stream: UnixStream, state: &Arc<ServerState>, connections: &Arc<Connections>) {
    let Ok(peer) = peer_of(&stream) else { return };
    if !peer.is_allowed() {
        refuse(stream, &Error::PeerRefused { uid: peer.uid });
        return;
    }
    let Some(session_id) = connections.admit(&stream, state.settings.connections_max) else {
        let connections_max = u64::try_from(state.settings.connections_max).unwrap_or(u64::MAX);
        refuse(stream, &Error::ServerBusy { connections_max });
        return;
    };
    let (state, connections) = (state.clone(), connections.clone());
    let spawned = std::thread::Builder::new().name(format!("cheesedb-client-{session_id}")).spawn({
        let connections = connections.clone();
        move || {
            let _ended = connection::serve(&state, stream, peer);
            connections.leave(session_id);
        }
    });
    if spawned.is_err() {
        connections.leave(session_id);
    }
}

/// Answers a connection this server will not serve with `error`, without waiting on it.
fn refuse(mut stream: UnixStream, error: &Error) {
    let _ = stream.set_write_timeout(Some(REFUSAL_WRITE_LIMIT));
    let mut body = Vec::new();
    if Response::failed(error).encode_into(&mut body).is_ok() {
        let _ = write_frame(&mut stream, &body);
    }
}
