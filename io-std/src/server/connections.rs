//! The connections being served: how many, and a handle on each socket so that a stopping
//! server can stop reading from all of them.

use std::collections::HashMap;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The open connections, each under the id of its session.
#[derive(Debug, Default)]
pub struct Connections {
    open: Mutex<OpenConnections>,
    /// Signalled when a connection ends.
    ended: Condvar,
}

#[derive(Debug, Default)]
struct OpenConnections {
    streams: HashMap<u64, UnixStream>,
    next_id: u64,
    /// Set once the server stops: no connection is admitted after.
    closed: bool,
}

impl Connections {
    fn open(&self) -> MutexGuard<'_, OpenConnections> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits `stream` when fewer than `most` connections are open; returns its session id.
    pub fn admit(&self, stream: &UnixStream, most: usize) -> Option<u64> {
        let mut open = self.open();
        if open.closed || open.streams.len() >= most {
            return None;
        }
        let handle = stream.try_clone().ok()?;
        open.next_id += 1;
        let id = open.next_id;
        open.streams.insert(id, handle);
        Some(id)
    }

    /// Notes that the connection `id` ended.
    pub fn leave(&self, id: u64) {
        self.open().streams.remove(&id);
        self.ended.notify_all();
    }

    /// Admits no more connections, and stops reading from every open one: a request being
    /// served is finished and answered, and the next read sees the end of the stream.
    pub fn stop_reading(&self) {
        let mut open = self.open();
        open.closed = true;
        for stream in open.streams.values() {
            let _ = stream.shutdown(Shutdown::Read);
        }
    }

    /// Waits until every connection ended.
    pub fn wait_until_all_ended(&self) {
        let mut open = self.open();
        while !open.streams.is_empty() {
            open = self.ended.wait(open).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_than_the_limit_are_admitted() {
        let connections = Connections::default();
        let (one, _one_peer) = UnixStream::pair().unwrap();
        let (two, _two_peer) = UnixStream::pair().unwrap();
        let first = connections.admit(&one, 1).unwrap();
        assert_eq!(connections.admit(&two, 1), None);
        connections.leave(first);
        assert!(connections.admit(&two, 1).is_some());
        connections.stop_reading();
        assert_eq!(connections.admit(&one, 10), None, "admitted after the stop");
    }
}
