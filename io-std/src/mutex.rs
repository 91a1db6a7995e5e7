//! Taking a lock shared between threads.

use std::sync::{Mutex, MutexGuard};

use cheesedb_core::Error;

/// Locks `mutex`; a lock whose holder panicked is refused, since what it guards may be half changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, Error> {
    // A panic while holding the lock leaves the engine in an unknown state: refuse to go on.
    mutex.lock().map_err(|_| Error::Poisoned)
}
