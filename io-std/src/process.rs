//! The process a store or a connection was opened in.
//!
//! `fork` gives the child a copy of every handle, with the parent's open files, folder lock and
//! sockets, but none of the parent's other threads. A child writing through its copy would be
//! handed the ids the parent hands out too, and the two would overwrite each other's records;
//! a connection shared by both would deliver one process's answers to the other. So each
//! handle keeps the id of the process that opened it, and every call checks it before it takes
//! any lock: a lock a thread of the parent held at the fork is never let go in the child, and a
//! child that waited for it would wait forever.

use std::sync::atomic::{AtomicU32, Ordering};

use cheesedb_core::Error;

/// The process that opened a handle.
#[derive(Debug)]
pub(crate) struct OpeningProcess {
    /// Its process id. Atomic only so that a unit test can stand in for a forked child.
    id: AtomicU32,
}

impl OpeningProcess {
    /// The process running now.
    pub(crate) fn current() -> OpeningProcess {
        OpeningProcess { id: AtomicU32::new(std::process::id()) }
    }

    /// Refuses with `Error::ForkedProcess` unless this is the process that opened the handle.
    /// One `getpid` call: the C library no longer caches the id, and it changes only at a fork.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let opening_process_id = self.id.load(Ordering::Relaxed);
        let current_process_id = std::process::id();
        if opening_process_id == current_process_id {
            Ok(())
        } else {
            Err(Error::ForkedProcess { opening_process_id, current_process_id })
        }
    }

    /// Whether this is the process that opened the handle.
    pub(crate) fn is_current(&self) -> bool {
        self.check().is_ok()
    }

    /// Makes this process look like a child forked from `opening_process_id`, for tests of what
    /// a child may do; a real fork needs code the workspace forbids (the Python tests fork).
    #[cfg(test)]
    pub(crate) fn pretend_opened_by(&self, opening_process_id: u32) {
        self.id.store(opening_process_id, Ordering::Relaxed);
    }
}

impl Clone for OpeningProcess {
    fn clone(&self) -> OpeningProcess {
        OpeningProcess { id: AtomicU32::new(self.id.load(Ordering::Relaxed)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_process_passes() {
        assert_eq!(OpeningProcess::current().check(), Ok(()));
        assert!(OpeningProcess::current().is_current());
    }

    #[test]
    fn another_process_is_refused_with_both_ids() {
        let process = OpeningProcess::current();
        let other = std::process::id().wrapping_add(1);
        process.pretend_opened_by(other);
        assert_eq!(
            process.check(),
            Err(Error::ForkedProcess { opening_process_id: other, current_process_id: std::process::id() })
        );
        assert!(!process.is_current());
    }
}
