//! Reaching a server's socket as the store reaches its files: the folder that holds it is
//! opened (it may be a link, the user's choice), and the socket's own name is looked at without
//! following a link. A link planted at `cheesedb.sock` could lead a client of one data folder
//! to the server of another, whose agents it would then list, create and delete; a socket of
//! another user could be a server that collects tokens. Both are refused before anything is
//! sent.
//!
//! On Linux the check and the connection meet the same file: the name is opened `O_PATH |
//! O_NOFOLLOW`, checked through that descriptor, and connected to through
//! `/proc/self/fd/N`, which reaches exactly the file checked. Elsewhere (or without `/proc`) the
//! name is looked at again after connecting, and the connection is used only when the same
//! socket is still there.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

use cheesedb_core::{Error, SocketProblem};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

/// Connects to the socket at `socket` after checking that it is a socket of this user, reached
/// without following a link.
///
/// # Errors
///
/// `Error::SocketRefused` for a link or a socket of another user; `Error::ServerUnavailable`
/// when nothing, or something that is not a socket, stands there, or nobody listens.
pub(crate) fn connect(socket: &Path) -> Result<UnixStream, Error> {
    let unavailable =
        |error: io::Error| Error::ServerUnavailable { path: socket.display().to_string(), reason: error.to_string() };
    let name = socket.file_name().ok_or_else(|| unavailable(io::Error::from(io::ErrorKind::InvalidInput)))?;
    let folder = match socket.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let folder = rustix::fs::open(folder, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|errno| unavailable(errno.into()))?;
    connect_in(&folder, name, socket)
}

/// Refuses what `stat` describes unless it is a socket of this user.
fn check(stat: &Stat, socket: &Path) -> Result<(), Error> {
    let path = socket.display().to_string();
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Socket => {}
        FileType::Symlink => return Err(Error::SocketRefused { path, problem: SocketProblem::SymbolicLink }),
        // Nothing a server listens on: the same answer as an empty place.
        _ => return Err(Error::ServerUnavailable { path, reason: String::from("what stands there is not a socket") }),
    }
    let user = crate::user::this_user();
    if stat.st_uid != user {
        return Err(Error::SocketRefused {
            path,
            problem: SocketProblem::OwnedByAnotherUser { owner: stat.st_uid, user },
        });
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn connect_in(folder: &OwnedFd, name: &OsStr, socket: &Path) -> Result<UnixStream, Error> {
    use std::os::fd::AsRawFd;

    let unavailable =
        |error: io::Error| Error::ServerUnavailable { path: socket.display().to_string(), reason: error.to_string() };
    let entry = rustix::fs::openat(folder, name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map_err(|errno| unavailable(errno.into()))?;
    let stat = rustix::fs::fstat(&entry).map_err(|errno| unavailable(errno.into()))?;
    check(&stat, socket)?;
    let through = format!("/proc/self/fd/{}", entry.as_raw_fd());
    match UnixStream::connect(&through) {
        Ok(stream) => Ok(stream),
        // No `/proc`: connect by the name, and check again after.
        Err(_) if !Path::new("/proc/self/fd").is_dir() => connect_by_name(folder, name, &stat, socket),
        Err(error) => Err(unavailable(error)),
    }
}

#[cfg(not(target_os = "linux"))]
fn connect_in(folder: &OwnedFd, name: &OsStr, socket: &Path) -> Result<UnixStream, Error> {
    let stat = stat_of(folder, name, socket)?;
    check(&stat, socket)?;
    connect_by_name(folder, name, &stat, socket)
}

/// The entry `name` in `folder`, not following a link.
fn stat_of(folder: &OwnedFd, name: &OsStr, socket: &Path) -> Result<Stat, Error> {
    rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|errno| Error::ServerUnavailable {
        path: socket.display().to_string(),
        reason: io::Error::from(errno).to_string(),
    })
}

/// Connects by the path, then makes sure the socket checked as `checked` is still the one at
/// the name: a link swapped in meanwhile is refused.
fn connect_by_name(folder: &OwnedFd, name: &OsStr, checked: &Stat, socket: &Path) -> Result<UnixStream, Error> {
    let stream = UnixStream::connect(socket)
        .map_err(|error| Error::ServerUnavailable { path: socket.display().to_string(), reason: error.to_string() })?;
    let after = stat_of(folder, name, socket)?;
    check(&after, socket)?;
    if (after.st_dev, after.st_ino) != (checked.st_dev, checked.st_ino) {
        return Err(Error::SocketRefused { path: socket.display().to_string(), problem: SocketProblem::SymbolicLink });
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_socket_of_this_user_is_reached_and_a_link_to_it_is_refused() {
        let place = tempfile::tempdir().unwrap();
        let real = place.path().join("real.sock");
        let listener = UnixListener::bind(&real).unwrap();
        connect(&real).unwrap();
        assert!(listener.accept().is_ok());

        let link = place.path().join("cheesedb.sock");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let refused = connect(&link).unwrap_err();
        assert_eq!(
            refused,
            Error::SocketRefused { path: link.display().to_string(), problem: SocketProblem::SymbolicLink }
        );
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "nothing connected through the link");
    }

    #[test]
    fn nothing_or_a_plain_file_is_no_server() {
        let place = tempfile::tempdir().unwrap();
        let missing = place.path().join("cheesedb.sock");
        assert!(matches!(connect(&missing), Err(Error::ServerUnavailable { .. })));
        std::fs::write(&missing, b"not a socket").unwrap();
        assert!(matches!(connect(&missing), Err(Error::ServerUnavailable { .. })));
        let stale = place.path().join("stale.sock");
        drop(UnixListener::bind(&stale).unwrap());
        assert!(matches!(connect(&stale), Err(Error::ServerUnavailable { .. })));
    }
}
