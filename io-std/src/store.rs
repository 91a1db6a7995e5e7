//! `Store`: a folder of agents, shared safely between threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use cheesedb_core::{Error, Fingerprint, LeftBehind, Options, StoreEngine, Token};

use crate::agent::Agent;
use crate::files::FileStorage;
use crate::group::GroupedEngine;
use crate::lock::FolderLock;
use crate::mutex::lock;
use crate::search::build_search_index_on_threads;
use crate::shared::{SharedEngine, SharedStorage, StoreShared};

/// Tells a failed open of a read-only store, whose storage refused a change, for what it is: a
/// repair that only a read-write open can make.
fn explain_refusal(read_only: &Option<Arc<AtomicBool>>, error: Error) -> Error {
    match (read_only, error) {
        (Some(refused), Error::Io { operation, path, .. }) if refused.load(Ordering::Relaxed) => {
            Error::RepairNeeded { operation, path }
        }
        (_, error) => error,
    }
}

/// An open store: a folder holding any number of agents. Cheap to clone; every clone and every
/// agent handle shares the folder lock, which is released when the last of them is dropped.
///
/// A store belongs to the process that opened it. In a child forked from that process (as
/// Python's `os.fork` and `multiprocessing` do), every method of the store, of its agents and
/// of their batches fails with `Error::ForkedProcess` before it takes a lock or touches a
/// file, and dropping them there writes nothing: the parent keeps the store to itself. Open
/// the store in the child instead, once the parent has closed it.
pub struct Store<S: SharedStorage = FileStorage> {
    pub(crate) shared: Arc<StoreShared<S>>,
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

impl Store<FileStorage> {
    pub(crate) fn open_files(
        storage: FileStorage,
        options: Options,
        lock: FolderLock,
        read_only: bool,
    ) -> Result<Store<FileStorage>, Error> {
        let refused = read_only.then(|| storage.refusal_flag());
        Store::open_locked(storage, options, Some(lock), refused)
    }
}

impl<S: SharedStorage> Store<S> {
    /// Opens a store on a storage backend of your own. The backend is responsible for keeping
    /// other processes out of its files.
    ///
    /// # Errors
    ///
    /// `Error::LimitExceeded` when `options` are out of range, `Error::Corrupt` when the
    /// catalog is damaged (or missing while agent folders exist), `Error::Io` when the storage
    /// fails.
    pub fn open_with(storage: S, options: Options) -> Result<Store<S>, Error> {
        Store::open_locked(storage, options, None, None)
    }

    fn open_locked(
        storage: S,
        options: Options,
        lock: Option<FolderLock>,
        read_only: Option<Arc<AtomicBool>>,
    ) -> Result<Store<S>, Error> {
        let catalog = StoreEngine::open(storage, options).map_err(|error| explain_refusal(&read_only, error))?;
        Ok(Store { shared: Arc::new(StoreShared::new(catalog, lock, read_only)) })
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that opened the store
    /// (a child forked from it), as every other method of the store and its agents does; for a
    /// caller that wants to know before it calls, or has to check a call that cannot fail.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the store.
    pub fn check_same_process(&self) -> Result<(), Error> {
        self.shared.check_process()
    }

    /// Whether the store was opened read-only.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.shared.read_only.is_some()
    }

    /// What deleting agents left in their folders since this open (names cheesedb did not
    /// make, links, folders where a file belongs), each with the reason. The agents themselves are
    /// gone; each open tries again to remove what is cheesedb's.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the store.
    pub fn left_behind(&self) -> Result<Vec<LeftBehind>, Error> {
        Ok(self.shared.catalog()?.left_behind().to_vec())
    }

    /// Creates an agent named `name` (any UTF-8 up to 256 bytes, compared byte by byte) and
    /// returns its token. The token is shown only now: the store keeps just its hash.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store.
    /// - `Error::InvalidName` when `name` is empty or starts with `cheesedb-`, as tokens do;
    ///   `Error::LimitExceeded` when it is too long or the store is full; `Error::AgentExists`.
    /// - `Error::Io` when the storage fails; `Error::Internal` when a thread panicked holding
    ///   the store.
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        self.shared.check_writable()?;
        self.shared.catalog()?.create_agent(name)
    }

    /// Creates an encrypted agent named `name` and returns its token, shown only now. Its
    /// contents, lot labels and vectors are sealed (XChaCha20-Poly1305) under keys derived from
    /// the token, which the store never keeps: without the token the folder reveals none of
    /// them. An Erase destroys the keys of what it erases, so copies of the segment files taken
    /// before it cannot be read for it afterwards, even with the token. Everything else works as
    /// for [`Store::create_agent`]. docs/THREAT_MODEL.md says what this covers and what not.
    ///
    /// # Errors
    ///
    /// As [`Store::create_agent`].
    pub fn create_encrypted_agent(&self, name: &str) -> Result<Token, Error> {
        self.shared.check_writable()?;
        self.shared.catalog()?.create_encrypted_agent(name)
    }

    /// Opens the agent that `token` belongs to. Handles of one agent share one engine.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownToken` when no agent of this store has that token.
    /// - `Error::Corrupt` when the agent's files do not hold a valid log; `Error::Io` when the
    ///   storage fails; `Error::RepairNeeded` when a read-only store would have to repair them.
    /// - `Error::Internal` when a thread panicked holding the store.
    pub fn open_agent(&self, token: &Token) -> Result<Agent<S>, Error> {
        let catalog = self.shared.catalog()?;
        let key = catalog.authenticate(token)?;
        let number = key.number();
        let mut open_agents = self.shared.open_agents()?;
        if let Some(engine) = open_agents.get(&number).and_then(Weak::upgrade) {
            return Ok(Agent::new(engine, self.shared.clone()));
        }
        let mut opened = catalog.open_agent(key).map_err(|error| explain_refusal(&self.shared.read_only, error))?;
        opened.build_search_index_with(build_search_index_on_threads);
        let engine: SharedEngine<S> = Arc::new(GroupedEngine::new(opened));
        open_agents.retain(|_, engine| engine.strong_count() > 0);
        open_agents.insert(number, Arc::downgrade(&engine));
        Ok(Agent::new(engine, self.shared.clone()))
    }

    /// Checks the files of the agent named `name` without its token: checksums, digests, the
    /// hash chain and commit markers, and for an encrypted agent that every content is sealed
    /// and every key file slot passes its check. Returns the head fingerprint of what the files
    /// hold (the one [`Agent::verify`] gives). For someone who keeps a store, or a copy of one,
    /// without holding its agents' tokens; an agent's own `verify` also opens every sealed
    /// content. Writes of the agent through this store wait while it runs.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; `Error::Corrupt` for the first damage;
    /// `Error::Io` when a file cannot be read; `Error::Internal` when a thread panicked holding
    /// the store or the agent.
    pub fn verify_agent_without_token(&self, name: &str) -> Result<cheesedb_core::Fingerprint, Error> {
        let catalog = self.shared.catalog()?;
        let number = catalog.agent_number(name)?;
        let open = self.shared.open_agents()?.get(&number).and_then(Weak::upgrade);
        // An open agent's active segment may be in the middle of a write: hold its engine.
        let _writes_held = open.as_ref().map(|engine| lock(&engine.engine)).transpose()?;
        catalog.verify_agent_without_token(name)
    }

    /// Deletes the agent named `name` and all the files cheesedb made for it. Open handles of
    /// it fail from now on with `Error::AgentDeleted`. Anything else found in its folder (a
    /// stray file or folder, a link) is left alone and listed by [`Store::left_behind`].
    ///
    /// # Errors
    ///
    /// `Error::ReadOnly` for a read-only store, `Error::UnknownAgent` when no agent has that
    /// name, `Error::Io` when the storage fails, `Error::Internal` when a thread panicked
    /// holding the store or the agent.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        self.shared.check_writable()?;
        let mut catalog = self.shared.catalog()?;
        let number = catalog.agent_number(name)?;
        let open = self.shared.open_agents()?.remove(&number).and_then(|engine| engine.upgrade());
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

    /// Converts the plaintext agent that `token` opens into an encrypted one, as if it had been
    /// made by [`Store::create_encrypted_agent`]: the same name and token, the same ids and
    /// history, every content still present sealed. The log is written again into a new folder,
    /// the catalog switches to it atomically, and the plaintext files are overwritten with zeros
    /// and removed before this returns: a crash at any point leaves the agent whole, plaintext or
    /// encrypted. A content an Erase or a compaction took stays gone, and a lot whose content is
    /// gone loses its label too (an encrypted agent keeps labels inside the sealed bytes).
    ///
    /// Returns the new head fingerprint: the history is chained anew over the sealed bytes, so
    /// a fingerprint kept before no longer matches; keep this one instead. The agent must not be
    /// open meanwhile. Agents already open work on; what needs the store's catalog (opening,
    /// creating or deleting an agent, an agent's name) waits until the conversion is done.
    ///
    /// # Errors
    ///
    /// - `Error::ReadOnly` for a read-only store; `Error::UnknownToken` for a token of no agent.
    /// - `Error::AgentInUse` while a handle of the agent is open (drop every `Agent` of it).
    /// - `Error::AlreadyEncrypted` for an agent that is encrypted already.
    /// - `Error::Corrupt` when the agent's log fails a check while it is copied: nothing changed.
    /// - `Error::Io` when the storage fails: before the switch nothing changed; after it the agent
    ///   is encrypted and the next open finishes removing the plaintext files.
    ///   `Error::OutcomeUnknown` when the switch may not be durable: reopen the store to see
    ///   which one the disk kept. `Error::Internal` when a thread panicked holding the store.
    pub fn encrypt_agent(&self, token: &Token) -> Result<Fingerprint, Error> {
        self.shared.check_writable()?;
        let mut catalog = self.shared.catalog()?;
        let number = catalog.authenticate(token)?.number();
        if self.shared.open_agents()?.get(&number).and_then(Weak::upgrade).is_some() {
            return Err(Error::AgentInUse { name: catalog.agent_name(number)? });
        }
        // The catalog stays locked: no handle of the agent can be opened until this is done.
        catalog.encrypt_agent(token)
    }

    /// Whether the agent named `name` is encrypted (made by [`Store::create_encrypted_agent`]
    /// or converted by [`Store::encrypt_agent`]).
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; `Error::Internal` when a thread
    /// panicked holding the store.
    pub fn is_encrypted(&self, name: &str) -> Result<bool, Error> {
        let catalog = self.shared.catalog()?;
        Ok(catalog.is_encrypted(catalog.agent_number(name)?))
    }

    /// The name of the agent that `token` opens, without opening it.
    ///
    /// # Errors
    ///
    /// `Error::UnknownToken` for a token of no agent; `Error::Internal` when a thread panicked
    /// holding the store.
    pub fn agent_name_of(&self, token: &Token) -> Result<String, Error> {
        let catalog = self.shared.catalog()?;
        catalog.agent_name(catalog.authenticate(token)?.number())
    }

    /// The names of all agents, in the order they were created.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the store.
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        Ok(self.shared.catalog()?.agent_names())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_lock_whose_holder_panicked_is_an_internal_error_not_a_poisoned_agent() {
        let mutex = Arc::new(Mutex::new(0u8));
        let holder = mutex.clone();
        let _ = std::thread::spawn(move || {
            let _guard = holder.lock();
            panic!("a holder that panics");
        })
        .join();
        let error = lock(&mutex).err();
        assert!(matches!(error, Some(Error::Internal { .. })), "{error:?}");
    }
}
