//! [`OpenedStore`]: what a `Store` and a `Client` share, a store open in this process or served,
//! and the agents opened from it, closed with it.

use std::sync::{Arc, Mutex, Weak};

use cheesedb::Token;
use pyo3::prelude::*;

use crate::agent::Agent;
pub(crate) use crate::agent_slot::lock;
use crate::agent_slot::AgentSlot;
use crate::errors::{closed, to_python, IntoPython};

/// One store, until it is closed, and the agents opened from it.
pub(crate) struct OpenedStore {
    /// What the Python class is called in messages: "store" or "client".
    noun: &'static str,
    store: Mutex<Option<cheesedb::Store>>,
    /// Each agent's handle, until the agent or its opener is closed.
    agents: Mutex<Vec<Weak<AgentSlot>>>,
}

impl OpenedStore {
    /// `store`, open, named `noun` when a call finds it closed.
    pub(crate) fn new(store: cheesedb::Store, noun: &'static str) -> OpenedStore {
        OpenedStore { noun, store: Mutex::new(Some(store)), agents: Mutex::default() }
    }

    /// Whether the store is still open.
    pub(crate) fn is_open(&self) -> bool {
        lock(&self.store).is_some()
    }

    /// A clone of the store, for one call.
    fn handle(&self) -> PyResult<cheesedb::Store> {
        lock(&self.store).clone().ok_or_else(|| closed(self.noun))
    }

    /// Creates an agent and returns its token.
    pub(crate) fn create_agent(&self, py: Python<'_>, name: &str, encrypted: bool) -> PyResult<String> {
        let store = self.handle()?;
        let token = py
            .detach(|| if encrypted { store.create_encrypted_agent(name) } else { store.create_agent(name) })
            .into_python(py)?;
        Ok(token.to_string())
    }

    /// Encrypts the agent `token` opens and returns its new fingerprint.
    pub(crate) fn encrypt_agent(&self, py: Python<'_>, token: &str) -> PyResult<String> {
        let store = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let fingerprint = py.detach(|| store.encrypt_agent(&token)).into_python(py)?;
        Ok(fingerprint.to_string())
    }

    /// Opens the agent `token` belongs to, kept to be closed with the store.
    pub(crate) fn open_agent(&self, py: Python<'_>, token: &str) -> PyResult<Agent> {
        let store = self.handle()?;
        let token: Token = token.parse().map_err(|error| to_python(py, error))?;
        let (handle, name) = py
            .detach(|| {
                let handle = store.open_agent(&token)?;
                let name = handle.name()?;
                Ok((handle, name))
            })
            .into_python(py)?;
        let slot = Arc::new(AgentSlot::new(handle));
        let mut slots = lock(&self.agents);
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        drop(slots);
        Ok(Agent::new(slot, name))
    }

    /// Deletes the agent named `name`.
    pub(crate) fn delete_agent(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let store = self.handle()?;
        py.detach(|| store.delete_agent(name)).into_python(py)
    }

    /// The names of all agents, in the order they were created.
    pub(crate) fn agent_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let store = self.handle()?;
        py.detach(|| store.agent_names()).into_python(py)
    }

    /// Closes the store and every agent still open from it. Every agent is closed even when one
    /// fails; a forked process's refusal comes first, then the first failure.
    pub(crate) fn close(&self, py: Python<'_>) -> PyResult<()> {
        let store = lock(&self.store).take();
        let forked = store.as_ref().map_or(Ok(()), cheesedb::Store::check_same_process);
        let agents: Vec<cheesedb::Agent> = std::mem::take(&mut *lock(&self.agents))
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|slot| slot.take())
            .collect();
        py.detach(|| {
            let mut first_failure = Ok(());
            for agent in agents {
                let closed = agent.close();
                if first_failure.is_ok() {
                    first_failure = closed;
                }
            }
            drop(store);
            forked.and(first_failure)
        })
        .into_python(py)
    }
}
