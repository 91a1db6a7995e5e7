//! The gate of one agent: who may write to it now.
//!
//! A batch hands out ids while it is open, and they stay final only if nothing else writes to
//! the agent before it commits. So an open batch holds its agent's gate from `__enter__` to
//! `__exit__`, and every other write through any handle of the agent passes the gate, waiting
//! (with the GIL released) while a batch of another thread holds it. A write from the thread
//! that holds the gate would wait for itself forever: it is refused instead.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use pyo3::prelude::*;

use crate::errors::invalid_argument;

/// One agent's gate, shared by every handle of that agent opened from one store.
#[derive(Default)]
pub(crate) struct Gate {
    /// The thread holding the gate, if any.
    holder: Mutex<Option<ThreadId>>,
    /// Signalled when the gate is let go.
    released: Condvar,
}

/// The gate held by the current thread until this is dropped or released.
pub(crate) struct Held<'gate> {
    gate: &'gate Gate,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.gate.release();
    }
}

impl Gate {
    /// The holder, even if a thread panicked while holding the inner lock: the holder is a
    /// plain value, never left half-changed.
    fn holder(&self) -> MutexGuard<'_, Option<ThreadId>> {
        self.holder.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until no other thread holds the gate, then holds it for the current thread until
    /// [`Gate::release`]. Call it with the GIL released: the wait may be long.
    ///
    /// # Errors
    ///
    /// `InvalidArgumentError` when the current thread holds the gate already (a batch of this
    /// agent is open on it).
    pub(crate) fn acquire(&self) -> PyResult<()> {
        let me = thread::current().id();
        let mut holder = self.holder();
        loop {
            match *holder {
                None => {
                    *holder = Some(me);
                    return Ok(());
                }
                Some(other) if other == me => {
                    return Err(invalid_argument(
                        "a batch of this agent is open on this thread: write through the batch, or end it first",
                    ))
                }
                Some(_) => holder = self.released.wait(holder).unwrap_or_else(std::sync::PoisonError::into_inner),
            }
        }
    }

    /// Like [`Gate::acquire`], held until the returned value is dropped.
    ///
    /// # Errors
    ///
    /// As [`Gate::acquire`].
    pub(crate) fn pass(&self) -> PyResult<Held<'_>> {
        self.acquire()?;
        Ok(Held { gate: self })
    }

    /// Lets the gate go, whichever thread holds it (a batch may end on another thread than the
    /// one that opened it, or be dropped by the garbage collector).
    pub(crate) fn release(&self) {
        *self.holder() = None;
        self.released.notify_all();
    }
}
