//! What every handle of one open store shares: the catalog, the engines of its open agents, the
//! folder lock, the read-only flag and the process that opened it.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use cheesedb_core::{AgentKey, Error, SpaceEngine, SpaceWrite, Storage, StoreEngine};

use crate::group::GroupedEngine;
use crate::grouping::Grouping;
use crate::lock::FolderLock;
use crate::mutex::lock;
use crate::process::OpeningProcess;

/// What a `Storage` must offer to be shared between threads.
pub trait SharedStorage: Storage<File: Send> + Clone + Send + 'static {}
impl<S> SharedStorage for S where S: Storage<File: Send> + Clone + Send + 'static {}

pub(crate) type SharedEngine<S> = Arc<GroupedEngine<S>>;

/// The engines of a store's open agents, by agent number.
type OpenAgents<S> = HashMap<u64, Weak<GroupedEngine<S>>>;

/// One open space's engine with its queue of members' writes waiting to be grouped, shared by
/// every handle of it.
pub(crate) struct GroupedSpace<S: Storage> {
    pub(crate) engine: Mutex<SpaceEngine<S>>,
    /// Members writing at once share a sync, as one agent's writers do.
    pub(crate) grouping: Grouping<(AgentKey, SpaceWrite)>,
}

/// The engine of one open space, shared by every handle of it.
pub(crate) type SharedSpace<S> = Arc<GroupedSpace<S>>;

pub(crate) struct StoreShared<S: SharedStorage> {
    /// Reached through [`StoreShared::catalog`], which checks the process first.
    catalog: Mutex<StoreEngine<S>>,
    /// One engine per agent, however many handles are open, so two handles never write the
    /// same log independently. Reached through [`StoreShared::open_agents`].
    open_agents: Mutex<OpenAgents<S>>,
    /// One engine per space, as for agents. Locks are taken in one order: the catalog, the
    /// open agents, the open spaces, a space's engine, then an agent's engine.
    open_spaces: Mutex<HashMap<u64, Weak<GroupedSpace<S>>>>,
    pub(crate) _lock: Option<FolderLock>,
    /// Present for a read-only store: set once its storage refused a change, so a failure that
    /// follows is reported as a repair the read-only open cannot make.
    pub(crate) read_only: Option<Arc<AtomicBool>>,
    /// Every entry to the store and its agents passes [`StoreShared::check_process`].
    pub(crate) process: OpeningProcess,
}

impl<S: SharedStorage> StoreShared<S> {
    /// What every handle of a store opened now shares.
    pub(crate) fn new(
        catalog: StoreEngine<S>,
        lock: Option<FolderLock>,
        read_only: Option<Arc<AtomicBool>>,
    ) -> StoreShared<S> {
        StoreShared {
            catalog: Mutex::new(catalog),
            open_agents: Mutex::new(HashMap::new()),
            open_spaces: Mutex::new(HashMap::new()),
            _lock: lock,
            read_only,
            process: OpeningProcess::current(),
        }
    }

    /// Refuses every call in a process forked from the one that opened the store, before any
    /// lock is taken (see `crate::process`).
    pub(crate) fn check_process(&self) -> Result<(), Error> {
        self.process.check()
    }

    /// The catalog, locked, in the process that opened the store only.
    pub(crate) fn catalog(&self) -> Result<MutexGuard<'_, StoreEngine<S>>, Error> {
        self.check_process()?;
        lock(&self.catalog)
    }

    /// The engines of the open agents, locked, in the process that opened the store only.
    pub(crate) fn open_agents(&self) -> Result<MutexGuard<'_, OpenAgents<S>>, Error> {
        self.check_process()?;
        lock(&self.open_agents)
    }

    /// The engine of space `number` when this process has it open, without opening it.
    #[cfg(feature = "replication")]
    pub(crate) fn open_space(&self, number: u64) -> Result<Option<SharedSpace<S>>, Error> {
        Ok(lock(&self.open_spaces)?.get(&number).and_then(Weak::upgrade))
    }

    /// The engine of space `number`: the one already open, or the one `open` opens.
    pub(crate) fn space_engine(
        &self,
        number: u64,
        open: impl FnOnce() -> Result<SpaceEngine<S>, Error>,
    ) -> Result<SharedSpace<S>, Error> {
        self.check_process()?;
        let mut open_spaces = lock(&self.open_spaces)?;
        if let Some(engine) = open_spaces.get(&number).and_then(Weak::upgrade) {
            return Ok(engine);
        }
        let engine = Arc::new(GroupedSpace { engine: Mutex::new(open()?), grouping: Grouping::default() });
        open_spaces.retain(|_, engine| engine.strong_count() > 0);
        open_spaces.insert(number, Arc::downgrade(&engine));
        Ok(engine)
    }

    /// Refuses a write up front when the store is read-only (or this is a forked process).
    pub(crate) fn check_writable(&self) -> Result<(), Error> {
        self.check_process()?;
        match self.read_only {
            Some(_) => Err(Error::ReadOnly),
            None => Ok(()),
        }
    }
}

impl<S: SharedStorage> StoreShared<S> {
    /// The name of agent `number`, from the catalog.
    pub(crate) fn agent_name(&self, number: u64) -> Result<String, Error> {
        self.catalog()?.agent_name(number)
    }
}
