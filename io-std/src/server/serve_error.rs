//! [`ServeError`]: why a memory server could not start, or stopped short.

use std::fmt;
use std::io::ErrorKind;
use std::path::PathBuf;

use crate::access_log::AccessLogError;
use crate::Error;

/// What the server was doing with its socket path when the system refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SocketStep {
    /// Looking at what stands at the path.
    Inspect,
    /// Asking whether a server answers there.
    Probe,
    /// Removing the socket a killed server left.
    RemoveStale,
    /// Listening at the path.
    Listen,
    /// Making the socket private to its user.
    MakePrivate,
    /// Sharing the listening socket with the thread that stops the server.
    Share,
}

impl SocketStep {
    /// The step in words, as an error message says it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            SocketStep::Inspect => "cannot look at the socket path",
            SocketStep::Probe => "cannot tell whether a server listens at",
            SocketStep::RemoveStale => "cannot remove the stale socket",
            SocketStep::Listen => "cannot listen at",
            SocketStep::MakePrivate => "cannot make private the socket",
            SocketStep::Share => "cannot share the listening socket",
        }
    }
}

/// The server's threads besides one per connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerThread {
    /// The thread writing the access log.
    AccessLog,
    /// The thread shipping the store to the object store.
    Replication,
}

/// Why a memory server could not start, or stopped short of a clean end.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The store in the folder could not be opened.
    Store {
        /// The data folder.
        folder: PathBuf,
        /// The engine's error.
        error: Error,
    },
    /// Another process holds the data folder, and no server answers at the socket: a command,
    /// an app, or a server with another socket.
    FolderInUse {
        /// The data folder.
        folder: PathBuf,
    },
    /// Another server answers at the socket.
    AnotherServer {
        /// The socket's path.
        socket: PathBuf,
    },
    /// The socket path belongs to another user.
    SocketOfAnotherUser {
        /// The socket's path.
        socket: PathBuf,
        /// The user that owns what stands there.
        owner: u32,
        /// This process's user.
        user: u32,
    },
    /// Something other than a socket stands at the socket path; it is left alone.
    NotASocket {
        /// The path.
        socket: PathBuf,
    },
    /// The system refused a step with the socket.
    Socket {
        /// The socket's path.
        socket: PathBuf,
        /// What the server was doing.
        step: SocketStep,
        /// What the system said.
        kind: ErrorKind,
    },
    /// A thread of the server could not be started.
    Thread {
        /// Which thread.
        thread: ServerThread,
        /// What the system said.
        kind: ErrorKind,
    },
    /// The access logs could not be opened or written.
    AccessLog(AccessLogError),
    /// Replication could not start: the replicas in the object store could not be read.
    Replication(Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Store { folder, error } => write!(formatter, "opening {}: {error}", folder.display()),
            ServeError::FolderInUse { folder } => write!(
                formatter,
                "the data folder {} is in use by another cheesedb process (a command, an app or a server with another socket)",
                folder.display()
            ),
            ServeError::AnotherServer { socket } => write!(
                formatter,
                "another cheesedb server is running at {}; stop it first (or use it: every command finds it)",
                socket.display()
            ),
            ServeError::SocketOfAnotherUser { socket, owner, user } => write!(
                formatter,
                "refusing the socket path {}: it is owned by user {owner}, not by this user ({user}); choose another with --socket",
                socket.display()
            ),
            ServeError::NotASocket { socket } => write!(
                formatter,
                "refusing the socket path {}: something other than a socket is there; move it away or choose another with --socket",
                socket.display()
            ),
            ServeError::Socket { socket, step, kind } => {
                write!(formatter, "{} {}: {}", step.describe(), socket.display(), std::io::Error::from(*kind))
            }
            ServeError::Thread { thread, kind } => {
                let purpose = match thread {
                    ServerThread::AccessLog => "writing the access log",
                    ServerThread::Replication => "shipping to the object store",
                };
                write!(formatter, "cannot start the thread {purpose}: {}", std::io::Error::from(*kind))
            }
            ServeError::AccessLog(error) => error.fmt(formatter),
            ServeError::Replication(error) => write!(formatter, "cannot start replication: {error}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Store { error, .. } | ServeError::Replication(error) => Some(error),
            ServeError::AccessLog(error) => Some(error),
            _ => None,
        }
    }
}

impl From<AccessLogError> for ServeError {
    fn from(error: AccessLogError) -> ServeError {
        ServeError::AccessLog(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_error_names_the_step_the_path_and_the_system_words() {
        let error = ServeError::Socket {
            socket: PathBuf::from("/run/x.sock"),
            step: SocketStep::Listen,
            kind: ErrorKind::PermissionDenied,
        };
        let text = error.to_string();
        assert!(text.starts_with("cannot listen at /run/x.sock: "), "{text}");
        assert!(text.contains("ermission denied"), "{text}");
    }
}
