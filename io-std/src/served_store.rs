//! [`ServedStore`]: a store held by a memory server, as a [`Store`](crate::Store) made by
//! [`Store::connect`](crate::Store::connect) reaches it.
#![allow(deprecated)] // `Client` is this store's connections: deprecated to users only.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use cheesedb_core::internal::digest::token_hash;
use cheesedb_core::{Error, Token};

use crate::agent::ServedAgent;
use crate::batch_gate::BatchGate;
use crate::client::Client;

/// The connections to a server, whether writes are refused here, and the gates of the agents
/// opened through them.
#[derive(Debug, Clone)]
pub(crate) struct ServedStore {
    client: Client,
    read_only: bool,
    /// One gate per agent (by the hash of its token, which opens exactly one: the token itself
    /// is not kept), shared by every handle of it
    /// opened here: a batch of one handle keeps the others' writes of this process waiting, or
    /// refused on its own thread, as a local store's gate does, rather than left waiting on the
    /// server for a batch that only their own thread could end.
    gates: Arc<Mutex<HashMap<[u8; 32], Weak<BatchGate>>>>,
}

impl ServedStore {
    /// The store of the server `client` connected to; `read_only` refuses writes here.
    pub(crate) fn new(client: Client, read_only: bool) -> ServedStore {
        ServedStore { client, read_only, gates: Arc::default() }
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The client, for a request that writes: refused when connected read-only.
    pub(crate) fn writable(&self) -> Result<&Client, Error> {
        self.client.check_same_process()?;
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        Ok(&self.client)
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub(crate) fn socket_path(&self) -> &Path {
        self.client.socket_path()
    }

    pub(crate) fn check_same_process(&self) -> Result<(), Error> {
        self.client.check_same_process()
    }

    /// Opens the agent of `token` on a connection of its own.
    pub(crate) fn open_agent(&self, token: &Token) -> Result<ServedAgent, Error> {
        let (session, facts) = self.client.open_agent_telling(token)?;
        Ok(ServedAgent::open(session, facts, self.gate(token), self.read_only))
    }

    /// Whether `agent` was opened through this store (its gate is one of this store's).
    pub(crate) fn holds(&self, agent: &ServedAgent) -> bool {
        let gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        gates.values().any(|gate| std::ptr::eq(gate.as_ptr(), Arc::as_ptr(agent.gate())))
    }

    /// The gate of the agent `token` opens.
    fn gate(&self, token: &Token) -> Arc<BatchGate> {
        let key = token_hash(token.as_bytes());
        let mut gates = self.gates.lock().unwrap_or_else(PoisonError::into_inner);
        gates.retain(|_, gate| gate.strong_count() > 0);
        if let Some(gate) = gates.get(&key).and_then(Weak::upgrade) {
            return gate;
        }
        let gate = Arc::new(BatchGate::default());
        gates.insert(key, Arc::downgrade(&gate));
        gate
    }
}
