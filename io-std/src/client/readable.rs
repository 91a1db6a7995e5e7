//! Waiting for an answer by looking for it a little before sleeping.
//!
//! A blocked read sleeps, and on a virtual machine whose processors are idle the wake-up can
//! cost several times a request's own work; polling for a few tens of microseconds first keeps
//! a quick answer quick. The poll yields the processor each time, so another thread that needs
//! it runs meanwhile.

use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use rustix::net::RecvFlags;

/// How long to poll before a blocking read: about a round trip on a busy machine.
pub(crate) const POLL_BEFORE_SLEEP: Duration = Duration::from_micros(50);

/// Polls `stream` for up to `limit` until bytes can be read (or the peer closed it); returns
/// whether that happened. Any error of the poll leaves the answer to the blocking read.
pub(crate) fn poll_readable(stream: &UnixStream, limit: Duration) -> bool {
    let started = Instant::now();
    let mut byte = [0u8; 1];
    loop {
        match rustix::net::recv(stream, &mut byte[..], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
            Ok(_) => return true,
            Err(rustix::io::Errno::AGAIN) => {}
            Err(_) => return true,
        }
        if started.elapsed() >= limit {
            return false;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn bytes_waiting_are_seen_and_silence_gives_up() {
        let (one, mut other) = UnixStream::pair().unwrap();
        assert!(!poll_readable(&one, Duration::from_micros(100)));
        other.write_all(b"x").unwrap();
        assert!(poll_readable(&one, Duration::from_micros(100)));
        drop(other);
    }
}
