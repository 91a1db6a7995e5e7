//! SIGTERM and SIGINT: the first asks the server to stop cleanly, a second stops it at once.

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::failure::{Failure, EXIT_ERROR};

/// Watches for SIGTERM and SIGINT on a thread of its own. The first sets `stopping` and wakes
/// the accepting thread (by connecting to the socket once); a second ends the
/// process at once, which the store survives as it survives a crash.
pub fn watch(stopping: Arc<AtomicBool>, socket: PathBuf, listener: &UnixListener) -> Result<(), Failure> {
    let mut signals = Signals::new([SIGTERM, SIGINT])
        .map_err(|error| Failure::new(format!("cannot watch for SIGTERM and SIGINT: {error}")))?;
    let listener =
        listener.try_clone().map_err(|error| Failure::new(format!("cannot share the listening socket: {error}")))?;
    std::thread::Builder::new()
        .name(String::from("cheesedb-signals"))
        .spawn(move || {
            for _signal in signals.forever() {
                if stopping.swap(true, Ordering::SeqCst) {
                    eprintln!("cheesedb serve: a second signal: stopping at once");
                    std::process::exit(i32::from(EXIT_ERROR));
                }
                // A connection wakes the accepting thread; should the socket file be gone,
                // shutting the listener down does (on Linux).
                let _ = UnixStream::connect(&socket);
                let _ = rustix::net::shutdown(&listener, rustix::net::Shutdown::Read);
            }
        })
        .map_err(|error| Failure::new(format!("cannot start the thread watching for signals: {error}")))?;
    Ok(())
}
