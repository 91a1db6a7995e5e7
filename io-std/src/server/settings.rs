//! What a server allows: how many connections, and how long a client may take.

use std::time::Duration;

/// Connections served at once unless `--connections-max` says otherwise.
pub const CONNECTIONS_MAX_DEFAULT: u32 = 128;
/// How long a client may take to finish a request it started, to read an answer, or to send
/// the next write of an open batch, unless `--client-timeout-ms` says otherwise.
pub const CLIENT_TIMEOUT_DEFAULT_MS: u64 = 10_000;

/// The limits of one server.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Connections served at once; one more is answered `ServerBusy` and closed.
    pub connections_max: usize,
    /// How long a client may take to finish a frame it started, to read an answer, or to send
    /// the next step of a batch it opened (other writers of the agent wait meanwhile).
    pub client_timeout: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            connections_max: usize::try_from(CONNECTIONS_MAX_DEFAULT).unwrap_or(usize::MAX),
            client_timeout: Duration::from_millis(CLIENT_TIMEOUT_DEFAULT_MS),
        }
    }
}
