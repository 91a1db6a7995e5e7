//! Which user the server runs as: a client only talks to a server of its own user or root, so
//! a socket another user put in place cannot collect its tokens and memories.

use std::os::unix::net::UnixStream;

use cheesedb_core::Error;

/// Refuses a server whose user is neither this process's nor root.
#[cfg(target_os = "linux")]
pub(crate) fn check_server_user(stream: &UnixStream) -> Result<(), Error> {
    let credentials = rustix::net::sockopt::socket_peercred(stream).map_err(|error| Error::ConnectionLost {
        reason: format!("the server's credentials cannot be read: {error}"),
        write_in_flight: false,
    })?;
    let server = credentials.uid.as_raw();
    if crate::user::is_own_or_root(server) {
        return Ok(());
    }
    Err(Error::PeerRefused { uid: server })
}

/// Elsewhere the socket's folder, private to the user, is what keeps other users out.
#[cfg(not(target_os = "linux"))]
pub(crate) fn check_server_user(_stream: &UnixStream) -> Result<(), Error> {
    Ok(())
}
