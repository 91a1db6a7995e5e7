//! The server's socket file: claimed for this server (a stale one from a killed server is
//! replaced, a live one or one of another user refused), private to its user, removed at the end.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use rustix::fs::Mode;

use super::peer::server_uid;
use crate::failure::Failure;

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
pub fn inspect(path: &Path) -> Result<Found, Failure> {
    let shown = path.display();
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(error) => return Err(Failure::new(format!("cannot look at the socket path {shown}: {error}"))),
    };
    if metadata.uid() != server_uid() {
        return Err(Failure::new(format!(
            "refusing the socket path {shown}: it is owned by user {}, not by this user ({}); choose another with --socket",
            metadata.uid(),
            server_uid()
        )));
    }
    if !metadata.file_type().is_socket() {
        return Err(Failure::new(format!(
            "refusing the socket path {shown}: something other than a socket is there; move it away or choose another with --socket"
        )));
    }
    match UnixStream::connect(path) {
        Ok(_) => Ok(Found::Live),
        Err(error) if matches!(error.kind(), ErrorKind::ConnectionRefused | ErrorKind::NotFound) => Ok(Found::Stale),
        Err(error) => Err(Failure::new(format!("cannot tell whether a server listens at {shown}: {error}"))),
    }
}

/// The failure when another server answers at `path`.
pub fn another_server(path: &Path) -> Failure {
    Failure::new(format!(
        "another cheesedb server is running at {}; stop it first (or use it: every command finds it)",
        path.display()
    ))
}

/// Claims `path` for this server: replaces a stale socket, refuses a live one or anything this
/// server may not replace, and listens with mode 0600 from the first moment.
pub fn claim(path: &Path) -> Result<UnixListener, Failure> {
    let shown = path.display();
    match inspect(path)? {
        Found::Live => return Err(another_server(path)),
        Found::Stale => fs::remove_file(path)
            .map_err(|error| Failure::new(format!("cannot remove the stale socket {shown}: {error}")))?,
        Found::Nothing => {}
    }
    // The mask makes the socket private as it is made, before anyone could connect; the mode
    // is set again after, in case the system ignores the mask for sockets.
    let mask_before = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(mask_before);
    let listener = bound.map_err(|error| Failure::new(format!("cannot listen at {shown}: {error}")))?;
    fs::set_permissions(path, fs::Permissions::from_mode(SOCKET_MODE))
        .map_err(|error| Failure::new(format!("cannot make the socket {shown} private: {error}")))?;
    Ok(listener)
}

/// Removes the socket at `path` if it is still a socket of this user.
pub fn remove(path: &Path) {
    let ours = fs::symlink_metadata(path)
        .is_ok_and(|metadata| metadata.file_type().is_socket() && metadata.uid() == server_uid());
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
        assert!(claim(&path).unwrap_err().message().contains("another cheesedb server"));
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
        assert!(claim(&path).unwrap_err().message().contains("other than a socket"));
        assert_eq!(fs::read(&path).unwrap(), b"keep me");
    }
}
