//! `cheesedb serve`: one process holds the store and serves every client over a Unix socket.
//!
//! The accepting thread checks each peer's credentials (its user must be the server's or
//! root) and the number of connections, then gives the connection a thread of its own
//! ([`connection`]), which holds the connection's [`session`]. Sessions of one agent share its
//! engine (the store opens each agent once), so their writes join in group commit. Every
//! request served on a session that opened an agent by its token (and, without a token, an
//! agent created or deleted) is written to the agent's access log with the peer's pid and uid,
//! by a thread of its own once the answer is sent, so no client waits for the log
//! ([`access_writer`]); what a peer without a token asks writes nothing there.
//!
//! A slow client only holds its own thread: a frame must be whole, and an answer read, within
//! the client timeout. SIGTERM or SIGINT stops the server: no new connection is accepted, each
//! connection's request in flight is finished and answered, the socket is removed and the
//! store closed.

mod access;
mod access_writer;
mod connection;
mod connections;
mod gate;
mod peer;
mod reply;
mod session;
mod settings;
mod socket_file;
mod stop;
mod timed_stream;
mod tracking;
mod trust;

use std::io::ErrorKind;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cheesedb::protocol::{write_frame, Response};
use cheesedb::{Error, Store, TrustRules};

use crate::access_log::AccessLogs;
use crate::failure::Failure;
use access_writer::AccessRecorder;
use connections::Connections;
use gate::Gates;
use peer::peer_of;
pub use settings::{Settings, CLIENT_TIMEOUT_DEFAULT_MS, CONNECTIONS_MAX_DEFAULT};

/// How long the accepting thread waits to hand a refusal to a peer it will not serve.
const REFUSAL_WRITE_LIMIT: Duration = Duration::from_millis(100);
/// A pause after a failed accept (out of file descriptors, say), so a failure that lasts does
/// not spin.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(50);

/// What every connection's thread shares.
#[derive(Debug)]
pub struct ServerState {
    /// The store, open for the server's whole life.
    pub store: Store,
    /// The write gates of the agents in use.
    pub gates: Gates,
    /// The server's limits.
    pub settings: Settings,
    /// The access logs.
    pub access: AccessRecorder,
    /// The rules of `trust.toml`.
    pub trust_rules: TrustRules,
    /// When writes are answered only once shipped to the object store: the replicator.
    pub wait_for_ship: Option<crate::replication::SharedReplicator>,
}

/// Serves the store in `folder`, opened as `access` says, at `socket` until SIGTERM or SIGINT.
/// `ready` is called once the socket listens.
pub fn serve(
    folder: &Path,
    socket: &Path,
    access: crate::session::Access,
    settings: Settings,
    replication: Option<crate::replication::Replication>,
    ready: impl FnOnce(),
) -> Result<(), Failure> {
    let store = open_store(folder, socket, access)?;
    let stopping = Arc::new(AtomicBool::new(false));
    let replicator =
        replication.as_ref().map(|replication| crate::replication::start(&store, folder, replication)).transpose()?;
    let shipper = match (&replication, &replicator) {
        (Some(replication), Some(replicator)) => {
            let (replication, replicator, stopping) = (replication.clone(), replicator.clone(), stopping.clone());
            let spawned = std::thread::Builder::new().name(String::from("cheesedb-replication")).spawn(move || {
                crate::replication::ship_until_stopped(&replicator, &replication, &stopping);
            });
            Some(spawned.map_err(|error| Failure::new(format!("cannot start replication: {error}")))?)
        }
        _ => None,
    };
    let wait_for_ship =
        replicator.filter(|_| replication.as_ref().is_some_and(|replication| replication.wait_for_ship));
    let access = AccessRecorder::start(AccessLogs::open(folder)?)?;
    let trust_rules = trust::load(folder)?;
    let listener = socket_file::claim(socket)?;
    let state = Arc::new(ServerState { store, gates: Gates::default(), settings, access, trust_rules, wait_for_ship });
    stop::watch(stopping.clone(), socket.to_path_buf(), &listener)?;
    ready();
    let connections = Arc::new(Connections::default());
    accept_until_stopped(&listener, &state, &connections, &stopping);
    drop(listener);
    // The socket goes while the store's lock is still held, so a server started next cannot
    // have put its own socket there yet.
    socket_file::remove(socket);
    connections.stop_reading();
    connections.wait_until_all_ended();
    state.access.finish();
    drop(state);
    // The last pass ships what the clients wrote before the stop.
    if let Some(shipper) = shipper {
        let _ = shipper.join();
    }
    Ok(())
}

/// Opens the store; when another process holds it, says whether that is a server.
fn open_store(folder: &Path, socket: &Path, access: crate::session::Access) -> Result<Store, Failure> {
    let opened = Store::builder(folder).io(access.io).read_only(access.read_only).open();
    match opened {
        Ok(store) => Ok(store),
        Err(Error::Locked) => match socket_file::inspect(socket) {
            Ok(socket_file::Found::Live) => Err(socket_file::another_server(socket)),
            _ => Err(Failure::new(format!(
                "the data folder {} is in use by another cheesedb process (a command, an app or a server with another socket)",
                folder.display()
            ))),
        },
        Err(error) => Err(Failure::from(error).context(&format!("opening {}", folder.display()))),
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
            let _ended = connection::serve(&state, session_id, stream, peer);
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
