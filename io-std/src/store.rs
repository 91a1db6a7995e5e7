//! `Store`: a folder of agents, open in this process or served by a memory server, shared
//! safely between threads.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use cheesedb_core::{
    AgentKey, Error, Fingerprint, LeftBehind, LocalOperation, Options, StoreEngine, Token, TrustRules,
};

use crate::agent::{Agent, LocalAgent};
use crate::files::FileStorage;
use crate::group::GroupedEngine;
use crate::lock::FolderLock;
use crate::mutex::lock;
use crate::search::build_search_index_on_threads;
use crate::served_store::ServedStore;
use crate::shared::{SharedEngine, SharedStorage, StoreShared};
use crate::space::{apply_space_recalls, LocalSpace, ServedSpace, Space, SpaceMembers};

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
/// One type whether the folder is open in this process ([`Store::open`], [`Store::builder`])
/// or held by a memory server (`cheesedb serve`), reached through its socket
/// ([`Store::connect`]): the methods and their errors are the same, and so are those of the
/// agents it opens. A connected store keeps a few connections for its own requests; each agent
/// it opens has one of its own, and a session on the server beside it. The trust rules are the
/// store's: given to the builder (or [`Store::with_trust_rules`]) for a store open here, those
/// of the server's data folder (`trust.toml`) through a server.
///
/// A store belongs to the process that opened it (or connected). In a child forked from that
/// process (as Python's `os.fork` and `multiprocessing` do), every method of the store, of its
/// agents and of their batches fails with `Error::ForkedProcess` before it takes a lock,
/// touches a file or sends anything, and dropping them there writes nothing: the parent keeps
/// the store to itself. Open the store (or connect) in the child instead, once the parent has
/// closed it.
pub struct Store<S: SharedStorage = FileStorage> {
    reach: StoreReach<S>,
}

/// Where the store is.
enum StoreReach<S: SharedStorage> {
    /// Open in this process, judging trust by `trust_rules`.
    Local { shared: Arc<StoreShared<S>>, trust_rules: Arc<TrustRules> },
    /// Held by a memory server.
    Served(ServedStore),
}

impl<S: SharedStorage> Clone for Store<S> {
    fn clone(&self) -> Store<S> {
        let reach = match &self.reach {
            StoreReach::Local { shared, trust_rules } => {
                StoreReach::Local { shared: shared.clone(), trust_rules: trust_rules.clone() }
            }
            StoreReach::Served(served) => StoreReach::Served(served.clone()),
        };
        Store { reach }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Store<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Store").field("served", &self.is_served()).finish_non_exhaustive()
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

    /// The store a memory server holds, reached through `served`.
    pub(crate) fn served(served: ServedStore) -> Store<FileStorage> {
        Store { reach: StoreReach::Served(served) }
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
        let shared = Arc::new(StoreShared::new(catalog, lock, read_only));
        Ok(Store { reach: StoreReach::Local { shared, trust_rules: Arc::default() } })
    }

    /// The same store, judging the trust of its agents' lots and memories by `rules`
    /// ([`Agent::trust`]) in the handles opened from the store returned; other handles keep
    /// theirs. A store reached through a server keeps the server's rules: this changes nothing
    /// there.
    #[must_use]
    pub fn with_trust_rules(self, rules: TrustRules) -> Store<S> {
        match self.reach {
            StoreReach::Local { shared, .. } => {
                Store { reach: StoreReach::Local { shared, trust_rules: Arc::new(rules) } }
            }
            served @ StoreReach::Served(_) => Store { reach: served },
        }
    }

    /// What every handle of a store open in this process shares, for what only such a store
    /// offers.
    pub(crate) fn local(&self, operation: LocalOperation) -> Result<&Arc<StoreShared<S>>, Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => Ok(shared),
            StoreReach::Served(_) => Err(Error::NeedsLocalStore { operation }),
        }
    }

    /// Whether a memory server holds the store (it was made by [`Store::connect`]).
    #[must_use]
    pub fn is_served(&self) -> bool {
        matches!(self.reach, StoreReach::Served(_))
    }

    /// The socket of the memory server that holds the store; `None` for a store open here.
    #[must_use]
    pub fn socket_path(&self) -> Option<&Path> {
        match &self.reach {
            StoreReach::Local { .. } => None,
            StoreReach::Served(served) => Some(served.socket_path()),
        }
    }

    /// Fails with `Error::ForkedProcess` when this is not the process that opened the store
    /// (a child forked from it), as every other method of the store and its agents does; for a
    /// caller that wants to know before it calls, or has to check a call that cannot fail.
    ///
    /// # Errors
    ///
    /// `Error::ForkedProcess` in a process other than the one that opened the store.
    pub fn check_same_process(&self) -> Result<(), Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => shared.check_process(),
            StoreReach::Served(served) => served.check_same_process(),
        }
    }

    /// Whether the store was opened read-only (for a served store: connected read-only, which
    /// refuses writes here, before any request).
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        match &self.reach {
            StoreReach::Local { shared, .. } => shared.read_only.is_some(),
            StoreReach::Served(served) => served.is_read_only(),
        }
    }

    /// What deleting agents left in their folders since this open (names cheesedb did not
    /// make, links, folders where a file belongs), each with the reason. The agents themselves are
    /// gone; each open tries again to remove what is cheesedb's.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the store; through a server, the errors
    /// of a connection.
    pub fn left_behind(&self) -> Result<Vec<LeftBehind>, Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => Ok(shared.catalog()?.left_behind().to_vec()),
            StoreReach::Served(served) => served.client().left_behind(),
        }
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
    ///   the store; through a server, the errors of a connection.
    pub fn create_agent(&self, name: &str) -> Result<Token, Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => {
                shared.check_writable()?;
                shared.catalog()?.create_agent(name)
            }
            StoreReach::Served(served) => served.writable()?.create_agent(name),
        }
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
        match &self.reach {
            StoreReach::Local { shared, .. } => {
                shared.check_writable()?;
                shared.catalog()?.create_encrypted_agent(name)
            }
            StoreReach::Served(served) => served.writable()?.create_encrypted_agent(name),
        }
    }

    /// Opens the agent that `token` belongs to: a session of its own (read tracking off, no
    /// staged batch). Handles of one agent share one engine; through a server, each open has a
    /// connection of its own.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownToken` when no agent of this store has that token (a wrong token gets
    ///   the same answer).
    /// - `Error::Corrupt` when the agent's files do not hold a valid log; `Error::Io` when the
    ///   storage fails; `Error::RepairNeeded` when a read-only store would have to repair them.
    /// - `Error::Internal` when a thread panicked holding the store.
    /// - Through a server, the errors of [`Store::connect`] when a new connection is needed, and
    ///   those of a connection.
    pub fn open_agent(&self, token: &Token) -> Result<Agent<S>, Error> {
        let (shared, trust_rules) = match &self.reach {
            StoreReach::Local { shared, trust_rules } => (shared, trust_rules),
            StoreReach::Served(served) => return served.open_agent(token).map(Agent::served),
        };
        let (engine, key) = Store::open_engine(shared, token)?;
        let agent = LocalAgent::new(engine, key, shared.clone(), trust_rules.clone());
        agent.compact_if_due()?;
        Ok(Agent::local(agent))
    }

    /// The engine of the agent `token` opens (the one already open, or a new one), and its key.
    /// A new one first applies the recalls of the spaces it built on that it has not applied
    /// yet, so it never answers with what depends on a recalled shared node.
    fn open_engine(shared: &StoreShared<S>, token: &Token) -> Result<(SharedEngine<S>, AgentKey), Error> {
        let catalog = shared.catalog()?;
        let key = catalog.authenticate(token)?;
        let number = key.number();
        let mut open_agents = shared.open_agents()?;
        if let Some(engine) = open_agents.get(&number).and_then(Weak::upgrade) {
            return Ok((engine, key));
        }
        let mut opened = catalog.open_agent(key).map_err(|error| explain_refusal(&shared.read_only, error))?;
        apply_space_recalls(shared, &catalog, &mut opened)
            .map_err(|error| explain_refusal(&shared.read_only, error))?;
        opened.build_search_index_with(build_search_index_on_threads);
        let engine: SharedEngine<S> = Arc::new(GroupedEngine::new(opened));
        open_agents.retain(|_, engine| engine.strong_count() > 0);
        open_agents.insert(number, Arc::downgrade(&engine));
        Ok((engine, key))
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
    /// the store or the agent; `Error::NeedsLocalStore` through a server.
    pub fn verify_agent_without_token(&self, name: &str) -> Result<cheesedb_core::Fingerprint, Error> {
        let shared = self.local(LocalOperation::VerifyWithoutToken)?;
        let catalog = shared.catalog()?;
        let number = catalog.agent_number(name)?;
        let open = shared.open_agents()?.get(&number).and_then(Weak::upgrade);
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
    /// holding the store or the agent; through a server, the errors of a connection.
    pub fn delete_agent(&self, name: &str) -> Result<(), Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => return served.writable()?.delete_agent(name),
        };
        shared.check_writable()?;
        let mut catalog = shared.catalog()?;
        let number = catalog.agent_number(name)?;
        let open = shared.open_agents()?.remove(&number).and_then(|engine| engine.upgrade());
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
    /// - Through a server, the errors of a connection: a broken one during the conversion is
    ///   `Error::ConnectionLost` with its outcome unknown. No connection may have the agent open.
    pub fn encrypt_agent(&self, token: &Token) -> Result<Fingerprint, Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => return served.writable()?.encrypt_agent(token),
        };
        shared.check_writable()?;
        let mut catalog = shared.catalog()?;
        let number = catalog.authenticate(token)?.number();
        if shared.open_agents()?.get(&number).and_then(Weak::upgrade).is_some() {
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
    /// panicked holding the store; through a server, the errors of a connection.
    pub fn is_encrypted(&self, name: &str) -> Result<bool, Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => return served.client().is_encrypted(name),
        };
        let catalog = shared.catalog()?;
        Ok(catalog.is_encrypted(catalog.agent_number(name)?))
    }

    /// The name of the agent that `token` opens, without opening it.
    ///
    /// # Errors
    ///
    /// `Error::UnknownToken` for a token of no agent; `Error::Internal` when a thread panicked
    /// holding the store; through a server, the errors of a connection.
    pub fn agent_name_of(&self, token: &Token) -> Result<String, Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => return served.client().agent_name_of(token),
        };
        let catalog = shared.catalog()?;
        catalog.agent_name(catalog.authenticate(token)?.number())
    }

    /// The names of all agents, in the order they were created.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the store; through a server, the errors
    /// of a connection.
    pub fn agent_names(&self) -> Result<Vec<String>, Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => Ok(shared.catalog()?.agent_names()),
            StoreReach::Served(served) => served.client().agent_names(),
        }
    }

    /// Creates the space named `name`, whose first member and admin is `first_admin`, an agent
    /// of this store, and returns that agent's handle to it. Space names follow agent names and
    /// may not hold `:` or `,`.
    ///
    /// # Errors
    ///
    /// `Error::InvalidName`, `Error::LimitExceeded`, `Error::SpaceExists`, `Error::Io` (see
    /// the core's `StoreEngine::create_space`); `Error::UnknownToken` when `first_admin` is an
    /// agent of another store; through a server, the errors of a connection.
    pub fn create_space(&self, name: &str, first_admin: &Agent<S>) -> Result<Space<S>, Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => {
                let admin =
                    first_admin.served_agent().filter(|admin| served.holds(admin)).ok_or(Error::UnknownToken)?;
                return ServedSpace::created(admin.as_member(), name).map(Space::served);
            }
        };
        let admin = first_admin.local_of(shared)?;
        LocalSpace::created(shared, admin.member(), name).map(Space::local)
    }

    /// Each space, in the order they were created, with the agents holding a role in it now
    /// (by name) and their roles: the store's own listing, as [`Store::agent_names`] is.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` or `Error::Io` when a space's log cannot be read; `Error::Internal`
    /// when a thread panicked holding the store; through a server, the errors of a connection.
    pub fn spaces(&self) -> Result<Vec<SpaceMembers>, Error> {
        let shared = match &self.reach {
            StoreReach::Local { shared, .. } => shared,
            StoreReach::Served(served) => {
                return Ok(served.client().spaces()?.into_iter().map(SpaceMembers::from).collect())
            }
        };
        let catalog = shared.catalog()?;
        let mut spaces = Vec::new();
        for name in catalog.space_names() {
            let number = catalog.space_number(&name)?;
            let engine = shared.space_engine(number, || catalog.open_space_to_apply_recalls(number))?;
            let roles = lock(&engine.engine)?.roles();
            let members = roles.into_iter().filter_map(|(agent, role)| Some((catalog.agent_name(agent).ok()?, role)));
            spaces.push(SpaceMembers { name, members: members.collect() });
        }
        Ok(spaces)
    }

    /// The names of the spaces, in the order they were created.
    ///
    /// # Errors
    ///
    /// `Error::Internal` when a thread panicked holding the store; through a server, the
    /// errors of a connection.
    pub fn space_names(&self) -> Result<Vec<String>, Error> {
        match &self.reach {
            StoreReach::Local { shared, .. } => Ok(shared.catalog()?.space_names()),
            StoreReach::Served(served) => served.client().space_names(),
        }
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
