//! The store as the `agent` commands see it: opened in this process, or reached through the
//! memory server that holds it.

use cheesedb::{Error, LeftBehind, Store, Token};

/// An opened store.
#[derive(Debug)]
pub enum StoreHandle {
    /// Open in this process, for as long as the handle lives.
    Local(Store),
}

impl StoreHandle {
    /// Creates the agent `name` and returns its token.
    ///
    /// # Errors
    ///
    /// The engine's, as `Store::create_agent` gives them.
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        match self {
            StoreHandle::Local(store) => store.create_agent(name),
        }
    }

    /// The agents' names, in creation order.
    ///
    /// # Errors
    ///
    /// The engine's, as `Store::agent_names` gives them.
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        match self {
            StoreHandle::Local(store) => store.agent_names(),
        }
    }

    /// Deletes the agent `name` and every file cheesedb made for it.
    ///
    /// # Errors
    ///
    /// The engine's, as `Store::delete_agent` gives them.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        match self {
            StoreHandle::Local(store) => store.delete_agent(name),
        }
    }

    /// What deletes left in place because cheesedb did not make it.
    ///
    /// # Errors
    ///
    /// The engine's, as `Store::left_behind` gives them.
    pub fn left_behind(&self) -> Result<Vec<LeftBehind>, Error> {
        match self {
            StoreHandle::Local(store) => store.left_behind(),
        }
    }
}
