//! What every handle of one open store shares: the catalog, the engines of its open agents, the
//! folder lock and the read-only flag.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};

use cheesedb_core::{Error, Storage, StoreEngine};

use crate::group::Shared;
use crate::lock::FolderLock;
use crate::mutex::lock;

/// What a `Storage` must offer to be shared between threads.
pub trait SharedStorage: Storage<File: Send> + Clone + Send + 'static {}
impl<S> SharedStorage for S where S: Storage<File: Send> + Clone + Send + 'static {}

pub(crate) type SharedEngine<S> = Arc<Shared<S>>;

pub(crate) struct StoreShared<S: SharedStorage> {
    pub(crate) catalog: Mutex<StoreEngine<S>>,
    /// One engine per agent, however many handles are open, so two handles never write the
    /// same log independently.
    pub(crate) open_agents: Mutex<HashMap<u64, Weak<Shared<S>>>>,
    pub(crate) _lock: Option<FolderLock>,
    /// Present for a read-only store: set once its storage refused a change, so a failure that
    /// follows is reported as a repair the read-only open cannot make.
    pub(crate) read_only: Option<Arc<AtomicBool>>,
}

impl<S: SharedStorage> StoreShared<S> {
    /// Refuses a write up front when the store is read-only.
    pub(crate) fn check_writable(&self) -> Result<(), Error> {
        match self.read_only {
            Some(_) => Err(Error::ReadOnly),
            None => Ok(()),
        }
    }
}

impl<S: SharedStorage> StoreShared<S> {
    /// The name of agent `number`, from the catalog.
    pub(crate) fn agent_name(&self, number: u64) -> Result<String, Error> {
        lock(&self.catalog)?.agent_name(number)
    }
}
