//! The engine handle behind a Python `Agent`: an agent of a store this process opened, or one
//! reached through a memory server. Both have the same methods with the same errors, so the
//! Python class calls them through [`either!`] and cannot treat the two differently by mistake.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;

use crate::errors::closed;

/// An open agent: in this process, or on a memory server.
#[derive(Clone)]
pub(crate) enum Handle {
    /// Opened from a `Store` of this process.
    Local(cheesedb::Agent),
    /// Opened through a `Client`, one session on the server.
    Remote(cheesedb::ClientAgent),
}

/// Runs the same code on either kind of handle: `either!(handle, agent => agent.get(id))`. The
/// code is compiled once for each kind, so a method the two spell differently fails to build.
macro_rules! either {
    ($handle:expr, $agent:ident => $body:expr) => {
        match $handle {
            $crate::handle::Handle::Local($agent) => $body,
            $crate::handle::Handle::Remote($agent) => $body,
        }
    };
}
pub(crate) use either;

impl Handle {
    /// Refuses a process forked from the one that opened the agent, before any lock or gate of
    /// the agent is taken (a thread of the parent may have held it at the fork).
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the agent.
    pub(crate) fn check_same_process(&self) -> Result<(), cheesedb::Error> {
        either!(self, agent => agent.check_same_process())
    }

    /// What opening the agent found and did. A server's answer may fail on the way.
    ///
    /// # Errors
    ///
    /// The errors of a connection, for a remote agent.
    pub(crate) fn report(&self) -> Result<cheesedb::Report, cheesedb::Error> {
        match self {
            Handle::Local(agent) => Ok(agent.report()),
            Handle::Remote(agent) => agent.report(),
        }
    }

    /// Whether the agent is encrypted. A server's answer may fail on the way.
    ///
    /// # Errors
    ///
    /// The errors of a connection, for a remote agent.
    pub(crate) fn is_encrypted(&self) -> Result<bool, cheesedb::Error> {
        match self {
            Handle::Local(agent) => Ok(agent.is_encrypted()),
            Handle::Remote(agent) => agent.is_encrypted(),
        }
    }

    /// Closes the handle: a local one writes the snapshot that is due when it is the last; a
    /// remote one closes its connection, which ends its session on the server.
    ///
    /// # Errors
    ///
    /// As `cheesedb::Agent::close`; `Error::ForkedProcess` in a forked process, where a remote
    /// handle is dropped without a word to the server.
    pub(crate) fn close(self) -> Result<(), cheesedb::Error> {
        self.check_same_process()?;
        match self {
            Handle::Local(agent) => agent.close(),
            Handle::Remote(agent) => {
                drop(agent);
                Ok(())
            }
        }
    }
}

/// The handle of an open agent, taken away when it is closed (by the agent itself, or by the
/// store or client it came from, which keep a weak reference to close it along with them).
pub(crate) struct AgentSlot {
    handle: Mutex<Option<Handle>>,
}

impl AgentSlot {
    /// A slot holding `handle`.
    pub(crate) fn new(handle: Handle) -> AgentSlot {
        AgentSlot { handle: Mutex::new(Some(handle)) }
    }

    /// The handle inside, or nothing once closed. The inner lock only guards an `Option`, which
    /// a panic cannot leave half-changed.
    fn slot(&self) -> MutexGuard<'_, Option<Handle>> {
        self.handle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A clone of the handle, for one call.
    ///
    /// # Errors
    ///
    /// `ClosedError` once the agent, or the store or client it came from, was closed.
    pub(crate) fn handle(&self) -> PyResult<Handle> {
        self.slot().clone().ok_or_else(|| closed("agent"))
    }

    /// Takes the handle out; later calls get `ClosedError`.
    pub(crate) fn take(&self) -> Option<Handle> {
        self.slot().take()
    }
}
