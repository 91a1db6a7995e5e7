//! The agents a `Store` or a `Client` opened: closed with it, and one write gate per agent
//! name, shared by every handle of that agent opened there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use cheesedb::TrustRules;

use crate::agent::Agent;
use crate::gate::Gate;
use crate::handle::{AgentSlot, Handle};

/// Locks `mutex` even if a thread panicked holding it: each guards plain values (an option, a
/// list, a map) that are only ever changed whole.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agents opened from one store or client.
#[derive(Default)]
pub(crate) struct OpenedAgents {
    /// Each agent's handle, until the agent or its opener is closed.
    slots: Mutex<Vec<Weak<AgentSlot>>>,
    /// One write gate per agent name, so a batch's thread cannot wait on a write of its own.
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

impl OpenedAgents {
    /// The Python agent of `handle`, named `name`, judged by `rules`; kept to be closed later.
    pub(crate) fn add(&self, handle: Handle, name: String, rules: Arc<TrustRules>) -> Agent {
        let slot = Arc::new(AgentSlot::new(handle));
        let mut slots = lock(&self.slots);
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        drop(slots);
        let gate = lock(&self.gates).entry(name.clone()).or_default().clone();
        Agent::new(slot, gate, name, rules)
    }

    /// The handles of every agent still open, taken from them: their Python agents answer
    /// ClosedError from now on.
    pub(crate) fn take_all(&self) -> Vec<Handle> {
        std::mem::take(&mut *lock(&self.slots))
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|slot| slot.take())
            .collect()
    }
}
