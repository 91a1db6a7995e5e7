//! [`AgentSlot`]: where a Python `Agent` keeps its engine handle, emptied when it is closed.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;

use crate::errors::closed;

/// Locks `mutex` even if a thread panicked holding it: each guards plain values (an option, a
/// list) that are only ever changed whole.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The handle of an open agent, taken away when it is closed (by the agent itself, or by the
/// store or client it came from, which keep a weak reference to close it along with them).
pub(crate) struct AgentSlot {
    handle: Mutex<Option<cheesedb::Agent>>,
}

impl AgentSlot {
    /// A slot holding `handle`.
    pub(crate) fn new(handle: cheesedb::Agent) -> AgentSlot {
        AgentSlot { handle: Mutex::new(Some(handle)) }
    }

    /// A clone of the handle, for one call.
    ///
    /// # Errors
    ///
    /// `ClosedError` once the agent, or the store or client it came from, was closed.
    pub(crate) fn handle(&self) -> PyResult<cheesedb::Agent> {
        lock(&self.handle).clone().ok_or_else(|| closed("agent"))
    }

    /// Takes the handle out; later calls get `ClosedError`.
    pub(crate) fn take(&self) -> Option<cheesedb::Agent> {
        lock(&self.handle).take()
    }
}
