//! [`Stopper`]: how another thread (a signal handler's, say) asks a server to stop cleanly.

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Asks a running [`Server`](super::Server) to stop: no new connection is accepted, each
/// connection's request in flight is finished and answered, the socket is removed and the
/// store closed, and [`Server::run`](super::Server::run) returns.
#[derive(Debug, Clone)]
pub struct Stopper {
    stopping: Arc<AtomicBool>,
    socket: PathBuf,
    listener: Arc<UnixListener>,
}

impl Stopper {
    /// The stopper of the server listening on `listener` at `socket`.
    pub(crate) fn new(stopping: Arc<AtomicBool>, socket: PathBuf, listener: UnixListener) -> Stopper {
        Stopper { stopping, socket, listener: Arc::new(listener) }
    }

    /// Asks the server to stop, and returns whether a stop had been asked already (a caller
    /// that wants a second signal to end the process at once can tell by it).
    pub fn stop(&self) -> bool {
        let asked_before = self.stopping.swap(true, Ordering::SeqCst);
        // A connection wakes the accepting thread; should the socket file be gone, shutting the
        // listener down does (on Linux).
        let _ = UnixStream::connect(&self.socket);
        let _ = rustix::net::shutdown(&*self.listener, rustix::net::Shutdown::Read);
        asked_before
    }
}
