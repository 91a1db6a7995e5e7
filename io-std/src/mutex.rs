//! Taking a lock shared between threads.

use std::sync::{Mutex, MutexGuard};

use cheesedb_core::{Error, InternalRule};

/// The error of a lock whose holder panicked: the engine never panics on its own, so this is a
/// bug, and what the holder left half-done is unknown.
pub(crate) const LOCK_POISONED: Error = Error::Internal { what: InternalRule::NoPanicWhileLocked };

/// Locks `mutex`; a lock whose holder panicked is refused, since what it guards may be half changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, Error> {
    // A panic while holding the lock leaves the engine in an unknown state: refuse to go on,
    // and say that this is a broken rule of the engine, not a failed write.
    mutex.lock().map_err(|_| LOCK_POISONED)
}
