//! The store as a command sees it: opened in this process, or reached through the memory
//! server that holds it.

use cheesedb::{Client, Error, Fingerprint, LeftBehind, Store, Token, TrustRules};

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

    /// Creates the agent `name`, encrypted when `encrypted`, and returns its token.
    ///
    /// # Errors
    ///
    /// As `Store::create_agent`.
    pub fn create_agent(&self, name: &str, encrypted: bool) -> Result<Token, Error> {
        match (self, encrypted) {
            (StoreHandle::Served { read_only: true, .. }, _) => Err(Error::ReadOnly),
            (StoreHandle::Local { store, .. }, false) => store.create_agent(name),
            (StoreHandle::Local { store, .. }, true) => store.create_encrypted_agent(name),
            (StoreHandle::Served { client, .. }, false) => client.create_agent(name),
            (StoreHandle::Served { client, .. }, true) => client.create_encrypted_agent(name),
        }
    }

    /// Converts the plaintext agent `token` opens into an encrypted one; returns its new head
    /// fingerprint.
    ///
    /// # Errors
    ///
    /// As `Store::encrypt_agent`.
    pub fn encrypt_agent(&self, token: &Token) -> Result<Fingerprint, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.encrypt_agent(token),
            StoreHandle::Served { read_only: true, .. } => Err(Error::ReadOnly),
            StoreHandle::Served { client, .. } => client.encrypt_agent(token),
        }
    }

    /// Whether the agent `name` is encrypted.
    ///
    /// # Errors
    ///
    /// As `Store::is_encrypted`.
    pub fn is_encrypted(&self, name: &str) -> Result<bool, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.is_encrypted(name),
            StoreHandle::Served { client, .. } => client.is_encrypted(name),
        }
    }

    /// The name of the agent `token` opens, without opening it.
    ///
    /// # Errors
    ///
    /// As `Store::agent_name_of`.
    pub fn agent_name_of(&self, token: &Token) -> Result<String, Error> {
        match self {
            StoreHandle::Local { store, .. } => store.agent_name_of(token),
            StoreHandle::Served { client, .. } => client.agent_name_of(token),
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
