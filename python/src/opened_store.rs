//! The agents a `Store` or a `Client` opened, closed with it.

use std::sync::{Arc, Mutex, Weak};

use crate::agent::Agent;
pub(crate) use crate::agent_slot::lock;
use crate::agent_slot::AgentSlot;

/// The agents opened from one store or client.
#[derive(Default)]
pub(crate) struct OpenedAgents {
    /// Each agent's handle, until the agent or its opener is closed.
    slots: Mutex<Vec<Weak<AgentSlot>>>,
}

impl OpenedAgents {
    /// The Python agent of `handle`, named `name`; kept to be closed later.
    pub(crate) fn add(&self, handle: cheesedb::Agent, name: String) -> Agent {
        let slot = Arc::new(AgentSlot::new(handle));
        let mut slots = lock(&self.slots);
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        drop(slots);
        Agent::new(slot, name)
    }

    /// The handles of every agent still open, taken from them: their Python agents answer
    /// ClosedError from now on.
    pub(crate) fn take_all(&self) -> Vec<cheesedb::Agent> {
        std::mem::take(&mut *lock(&self.slots))
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|slot| slot.take())
            .collect()
    }
}
