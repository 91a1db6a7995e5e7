//! `Store`: a folder of agents, shared safely between threads.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use cheesedb_core::{Error, Options, Storage, StoreEngine, Token};

use crate::agent::Agent;
use crate::files::{create_private_folder, FileStorage};
use crate::group::Shared;
use crate::io::Io;
use crate::lock::FolderLock;

/// What a `Storage` must offer to be shared between threads.
pub trait SharedStorage: Storage<File: Send> + Clone + Send + 'static {}
impl<S> SharedStorage for S where S: Storage<File: Send> + Clone + Send + 'static {}

pub(crate) type SharedEngine<S> = Arc<Shared<S>>;

pub(crate) struct StoreShared<S: SharedStorage> {
    catalog: Mutex<StoreEngine<S>>,
    /// One engine per agent, however many handles are open, so two handles never write the
    /// same log independently.
    open_agents: Mutex<HashMap<u64, Weak<Shared<S>>>>,
    _lock: Option<FolderLock>,
}

impl<S: SharedStorage> StoreShared<S> {
    /// The name of agent `number`, from the catalog.
    pub(crate) fn agent_name(&self, number: u64) -> Result<String, Error> {
        lock(&self.catalog)?.agent_name(number)
    }
}

/// An open store: a folder holding any number of agents. Cheap to clone; every clone and every
/// agent handle shares the folder lock, which is released when the last of them is dropped.
pub struct Store<S: SharedStorage = FileStorage> {
    shared: Arc<StoreShared<S>>,
}

impl<S: SharedStorage> Clone for Store<S> {
    fn clone(&self) -> Store<S> {
        Store { shared: self.shared.clone() }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Store<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Store").finish_non_exhaustive()
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, Error> {
    // A panic while holding the lock leaves the engine in an unknown state: refuse to go on.
    mutex.lock().map_err(|_| Error::Poisoned)
}

impl Store<FileStorage> {
    /// Opens the store in `path`, creating the folder (mode 0700) if needed, and takes its
    /// lock: a second open of the same folder, in this process or another, gets `Error::Locked`.
    pub fn open(path: impl AsRef<Path>) -> Result<Store<FileStorage>, Error> {
        Store::open_with_options(path, Options::default())
    }

    /// Like [`Store::open`], with settings.
    pub fn open_with_options(path: impl AsRef<Path>, options: Options) -> Result<Store<FileStorage>, Error> {
        Store::open_with_io(path, options, Io::Std)
    }

    /// Like [`Store::open_with_options`], with the files reached through `io`. With
    /// [`Io::Uring`] the kernel is probed first: where io_uring cannot be used the open fails
    /// with `Error::Io` saying why, and nothing is created.
    ///
    /// ```
    /// use cheesedb::{Io, Options, Store};
    ///
    /// # fn main() -> Result<(), cheesedb::Error> {
    /// # let folder = tempfile::tempdir().map_err(|_| cheesedb::Error::Locked)?;
    /// let io: Io = std::env::var("CHEESEDB_IO").ok().and_then(|name| name.parse().ok()).unwrap_or_default();
    /// let store = Store::open_with_io(folder.path(), Options::default(), io)?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_with_io(path: impl AsRef<Path>, options: Options, io: Io) -> Result<Store<FileStorage>, Error> {
        let path = path.as_ref();
        let storage = FileStorage::with_io(path, io).map_err(|error| Error::Io {
            operation: "starting io_uring for",
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
        create_private_folder(path).map_err(|error| Error::Io {
            operation: "creating",
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
        let lock = FolderLock::acquire(path)?;
        Store::open_locked(storage, options, Some(lock))
    }
}

impl<S: SharedStorage> Store<S> {
    /// Opens a store on a storage backend of your own. The backend is responsible for keeping
    /// other processes out of its files.
    pub fn open_with(storage: S, options: Options) -> Result<Store<S>, Error> {
        Store::open_locked(storage, options, None)
    }

    fn open_locked(storage: S, options: Options, lock: Option<FolderLock>) -> Result<Store<S>, Error> {
        let catalog = StoreEngine::open(storage, options)?;
        let shared = StoreShared { catalog: Mutex::new(catalog), open_agents: Mutex::new(HashMap::new()), _lock: lock };
        Ok(Store { shared: Arc::new(shared) })
    }

    /// Creates an agent named `name` (any UTF-8 up to 256 bytes, compared byte by byte) and
    /// returns its token. The token is shown only now: the store keeps just its hash.
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        lock(&self.shared.catalog)?.create_agent(name)
    }

    /// Opens the agent that `token` belongs to. Handles of one agent share one engine.
    pub fn open_agent(&self, token: &Token) -> Result<Agent<S>, Error> {
        let catalog = lock(&self.shared.catalog)?;
        let number = catalog.authenticate(token)?;
        let mut open_agents = lock(&self.shared.open_agents)?;
        if let Some(engine) = open_agents.get(&number).and_then(Weak::upgrade) {
            return Ok(Agent::new(engine, self.shared.clone()));
        }
        let engine: SharedEngine<S> = Arc::new(Shared::new(catalog.open_agent(number)?));
        open_agents.retain(|_, engine| engine.strong_count() > 0);
        open_agents.insert(number, Arc::downgrade(&engine));
        Ok(Agent::new(engine, self.shared.clone()))
    }

    /// Deletes the agent named `name` and all its files. Open handles of it fail from now on
    /// with `Error::AgentDeleted`.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        let mut catalog = lock(&self.shared.catalog)?;
        let number = catalog.agent_number(name)?;
        let open = lock(&self.shared.open_agents)?.remove(&number).and_then(|engine| engine.upgrade());
        match open {
            Some(engine) => {
                // Hold the engine while its files go, so no write slips in between.
                let mut engine = lock(&engine.engine)?;
                engine.mark_deleted();
                catalog.delete_agent(name)?;
            }
            None => {
                catalog.delete_agent(name)?;
            }
        }
        Ok(())
    }

    /// The names of all agents, in the order they were created.
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        Ok(lock(&self.shared.catalog)?.agent_names())
    }
}
