//! Who is on the other end of a connection, from the kernel: the peer's process and user.

use std::os::unix::net::UnixStream;

/// The process and user of a connection's peer, as the kernel saw them when it connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The peer's process id.
    pub pid: u32,
    /// The peer's user id.
    pub uid: u32,
}

impl Peer {
    /// Whether the peer may use this server: it runs as the server's user, or as root.
    pub fn is_allowed(self) -> bool {
        crate::user::is_own_or_root(self.uid)
    }
}

/// The peer of `stream`.
#[cfg(target_os = "linux")]
pub fn peer_of(stream: &UnixStream) -> std::io::Result<Peer> {
    let credentials = rustix::net::sockopt::socket_peercred(stream)?;
    let pid = u32::try_from(credentials.pid.as_raw_nonzero().get()).unwrap_or(0);
    Ok(Peer { pid, uid: credentials.uid.as_raw() })
}

/// Without peer credentials no peer can be vouched for.
#[cfg(not(target_os = "linux"))]
pub fn peer_of(_stream: &UnixStream) -> std::io::Result<Peer> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "peer credentials are read on Linux only"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_pair_shows_this_process() {
        let (one, _other) = UnixStream::pair().unwrap();
        let peer = peer_of(&one).unwrap();
        assert_eq!(peer.pid, std::process::id());
        assert_eq!(peer.uid, crate::user::this_user());
        assert!(peer.is_allowed());
        assert!(
            !Peer { pid: 1, uid: crate::user::this_user().wrapping_add(1).max(1) }.is_allowed()
                || crate::user::this_user() == 0
        );
    }
}
