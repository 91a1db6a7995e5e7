//! The store as a command sees it: opened in this process, or reached through the memory
//! server that holds it.

use cheesedb::{Client, Error, LeftBehind, Store, Token, TrustRules};

use crate::agent_handle::AgentHandle;

/// An opened store.
#[derive(Debug)]
pub enum StoreHandle {
    /// Open in this process, for as long as the handle lives.
    Local {
        /// The store.
        store: Store,
        /// The data folder's `trust.toml`, given to every agent opened here.
        trust_rules: TrustRules,
    },
    /// A memory server holds the store.
    Served {
        /// The connection to it.
        client: Client,
        /// Whether the command was asked to write nothing (`--read-only`).
        read_only: bool,
    },
}

impl StoreHandle {
    /// Opens the agent whose token is `token`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownToken` for a token of no agent; the engine's or the server's otherwise.
    pub fn open_agent(&self, token: &Token) -> Result<AgentHandle, Error> {
        match self {
            StoreHandle::Local { store, trust_rules } => {
                Ok(AgentHandle::in_process(store.open_agent(token)?, store.clone(), trust_rules.clone()))
            }
            StoreHandle::Served { client, read_only } => {
                Ok(AgentHandle::Served { agent: client.open_agent(token)?, read_only: *read_only })
            }
        }
    }

    /// Creates the agent `name` and returns its token.
    ///
    /// # Errors
    ///
    /// As `Store::create_agent`.
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.create_agent(name),
            StoreHandle::Served { read_only: true, .. } => Err(Error::ReadOnly),
            StoreHandle::Served { client, .. } => client.create_agent(name),
        }
    }

    /// The agents' names, in creation order.
    ///
    /// # Errors
    ///
    /// As `Store::agent_names`.
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.agent_names(),
            StoreHandle::Served { client, .. } => client.agent_names(),
        }
    }

    /// Deletes the agent `name` and every file cheesedb made for it.
    ///
    /// # Errors
    ///
    /// As `Store::delete_agent`.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        match self {
            StoreHandle::Local { store, .. } => store.delete_agent(name),
            StoreHandle::Served { read_only: true, .. } => Err(Error::ReadOnly),
            StoreHandle::Served { client, .. } => client.delete_agent(name),
        }
    }

    /// What deletes left in place because cheesedb did not make it.
    ///
    /// # Errors
    ///
    /// As `Store::left_behind`.
    pub fn left_behind(&self) -> Result<Vec<LeftBehind>, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.left_behind(),
            StoreHandle::Served { client, .. } => client.left_behind(),
        }
    }
}
