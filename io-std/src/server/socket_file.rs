//! The server's socket file: claimed for this server (a stale one from a killed server is
//! replaced, a live one or one of another user refused), private to its user, removed at the end.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::Path;

use rustix::fs::Mode;

use super::serve_error::{ServeError, SocketStep};
use crate::user::this_user;
use crate::{Error, SocketProblem};

/// The socket's permission bits: only its user may connect.
const SOCKET_MODE: u32 = 0o600;

/// What stands at the socket's path.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing.
    Nothing,
    /// A socket no server listens on: left by a server that was killed.
    Stale,
    /// A socket a server answers on.
    Live,
}

/// Looks at what stands at `path`; refuses anything this server may not replace.
pub fn inspect(path: &Path) -> Result<Found, ServeError> {
    let socket = || path.to_path_buf();
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(error) => {
            return Err(ServeError::Socket { socket: socket(), step: SocketStep::Inspect, kind: error.kind() })
        }
    };
    if metadata.uid() != this_user() {
        return Err(ServeError::SocketOfAnotherUser { socket: socket(), owner: metadata.uid(), user: this_user() });
    }
    if !metadata.file_type().is_socket() {
        return Err(ServeError::NotASocket { socket: socket() });
    }
    // The probe connects as a client does: through the very socket checked, never a link.
    match crate::client::connect_to_socket(path) {
        Ok(_) => Ok(Found::Live),
        Err(Error::ServerUnavailable { .. }) => Ok(Found::Stale),
        // Swapped since it was looked at: refused for what stands there now.
        Err(Error::SocketRefused { problem: SocketProblem::OwnedByAnotherUser { owner, user }, .. }) => {
            Err(ServeError::SocketOfAnotherUser { socket: socket(), owner, user })
        }
        Err(Error::SocketRefused { .. }) => Err(ServeError::NotASocket { socket: socket() }),
        Err(_) => Err(ServeError::Socket { socket: socket(), step: SocketStep::Probe, kind: ErrorKind::Other }),
    }
}

/// Claims `path` for this server: replaces a stale socket, refuses a live one or anything this
/// server may not replace, and listens with mode 0600 from the first moment.
pub fn claim(path: &Path) -> Result<UnixListener, ServeError> {
    let refused = |step: SocketStep| {
        move |error: std::io::Error| ServeError::Socket { socket: path.to_path_buf(), step, kind: error.kind() }
    };
    match inspect(path)? {
        Found::Live => return Err(ServeError::AnotherServer { socket: path.to_path_buf() }),
        Found::Stale => fs::remove_file(path).map_err(refused(SocketStep::RemoveStale))?,
        Found::Nothing => {}
    }
    // The mask makes the socket private as it is made, before anyone could connect; the mode
    // is set again after, in case the system ignores the mask for sockets.
    let mask_before = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(mask_before);
    let listener = bound.map_err(refused(SocketStep::Listen))?;
    fs::set_permissions(path, fs::Permissions::from_mode(SOCKET_MODE)).map_err(refused(SocketStep::MakePrivate))?;
    Ok(listener)
}

/// Removes the socket at `path` if it is still a socket of this user.
pub fn remove(path: &Path) {
    let ours = fs::symlink_metadata(path)
        .is_ok_and(|metadata| metadata.file_type().is_socket() && metadata.uid() == this_user());
    if ours {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_socket_is_private_and_a_second_claim_refused() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("test.sock");
        let listener = claim(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(inspect(&path).unwrap(), Found::Live);
        assert!(matches!(claim(&path).unwrap_err(), ServeError::AnotherServer { .. }));
        drop(listener);
        assert_eq!(inspect(&path).unwrap(), Found::Stale);
        let _again = claim(&path).unwrap();
        remove(&path);
        assert_eq!(inspect(&path).unwrap(), Found::Nothing);
    }

    #[test]
    fn a_file_that_is_not_a_socket_is_left_alone() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("not.sock");
        fs::write(&path, b"keep me").unwrap();
        assert!(matches!(claim(&path).unwrap_err(), ServeError::NotASocket { .. }));
        assert_eq!(fs::read(&path).unwrap(), b"keep me");
    }
}
