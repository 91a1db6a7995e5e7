//! The store: the catalog of agents, their tokens and their folders.
//!
//! The catalog is rewritten whole on each change (temporary file, sync, rename, folder sync).
//! An agent's folder is made before the catalog names it and removed after the catalog stops
//! naming it, so a crash at any point leaves at most an orphan folder, which the next open
//! removes.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::catalog_file::{CatalogEntry, CatalogFile};
use crate::digest::{equal_in_constant_time, token_hash};
use crate::engine::{io_error, AgentEngine};
use crate::error::Error;
use crate::limits::{self, Options, AGENTS_PER_STORE_MAX, AGENT_NAME_MAX_BYTES};
use crate::log::names::{agent_folder, parse_agent_folder, CATALOG_FILE, CATALOG_TEMPORARY_FILE};
use crate::storage::{Storage, StorageFile};
use crate::token::{Token, PREFIX as TOKEN_PREFIX};

/// The agents of one store folder.
#[derive(Debug)]
pub struct StoreEngine<S: Storage + Clone> {
    storage: S,
    options: Options,
    catalog: CatalogFile,
}

impl<S: Storage + Clone> StoreEngine<S> {
    /// Opens the store in `storage`, making an empty one if the folder holds none, and removes
    /// what interrupted creates and deletes left behind.
    pub fn open(storage: S, options: Options) -> Result<StoreEngine<S>, Error> {
        options.validate()?;
        let exists = |path: &str| storage.exists(path).map_err(|error| io_error("checking", path, error));
        if exists(CATALOG_TEMPORARY_FILE)? {
            storage
                .remove_file(CATALOG_TEMPORARY_FILE)
                .map_err(|error| io_error("removing", CATALOG_TEMPORARY_FILE, error))?;
        }
        let catalog = if exists(CATALOG_FILE)? {
            read_catalog(&storage)?
        } else if has_agent_folders(&storage)? {
            // Never start afresh over agents whose catalog is gone: that would delete them.
            let reason = "catalog missing while agent folders exist";
            return Err(Error::Corrupt { file: String::from(CATALOG_FILE), offset: 0, reason });
        } else {
            let empty = CatalogFile { next_number: 1, entries: Vec::new() };
            write_catalog(&storage, &empty)?;
            empty
        };
        let store = StoreEngine { storage, options, catalog };
        store.remove_orphan_folders()?;
        // The catalog just read may be a rename whose folder sync failed, and the temporary file
        // removed above is gone only once the folder is synced: what open serves must be durable.
        store.storage.sync_folder("").map_err(|error| io_error("syncing", "", error))?;
        Ok(store)
    }

    fn remove_orphan_folders(&self) -> Result<(), Error> {
        let names = self.storage.list("").map_err(|error| io_error("listing", "", error))?;
        let mut removed = false;
        for name in names {
            let Some(number) = parse_agent_folder(&name) else { continue };
            if self.catalog.entries.iter().any(|entry| entry.number == number) {
                continue;
            }
            // A create that crashed before the catalog named the agent, or a delete that
            // crashed after the catalog stopped naming it: nothing here was acknowledged.
            remove_folder_files(&self.storage, &name)?;
            removed = true;
        }
        if removed {
            self.storage.sync_folder("").map_err(|error| io_error("syncing", "", error))?;
        }
        Ok(())
    }

    /// The settings every agent is opened with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The names of the agents, in the order they were created.
    pub fn agent_names(&self) -> Vec<String> {
        self.catalog.entries.iter().map(|entry| entry.name.clone()).collect()
    }

    /// The number of the agent named `name`.
    pub fn agent_number(&self, name: &str) -> Result<u64, Error> {
        self.catalog
            .entries
            .iter()
            .find(|entry| entry.name.as_bytes() == name.as_bytes())
            .map(|entry| entry.number)
            .ok_or_else(|| Error::UnknownAgent { name: String::from(name) })
    }

    /// The name of agent `number`; `AgentDeleted` once it is gone from the catalog.
    pub fn agent_name(&self, number: u64) -> Result<String, Error> {
        self.catalog
            .entries
            .iter()
            .find(|entry| entry.number == number)
            .map(|entry| entry.name.clone())
            .ok_or(Error::AgentDeleted)
    }

    /// Creates an agent; returns its token, which the store does not keep (only its hash).
    pub fn create_agent(&mut self, name: &str) -> Result<Token, Error> {
        if name.is_empty() {
            return Err(Error::InvalidName { reason: "an agent name must not be empty" });
        }
        if name.trim().starts_with(TOKEN_PREFIX) {
            // Commands and tools take a name or a token in one place, and read such a name as a
            // token: the agent could never be reached by its name.
            return Err(Error::InvalidName { reason: "an agent name must not start with \"cheesedb-\", as tokens do" });
        }
        limits::check("agent name length in bytes", name.len(), AGENT_NAME_MAX_BYTES)?;
        limits::check("agents in one store", self.catalog.entries.len() + 1, AGENTS_PER_STORE_MAX)?;
        if self.agent_number(name).is_ok() {
            return Err(Error::AgentExists { name: String::from(name) });
        }
        let mut secret = [0u8; 32];
        self.storage.fill_random(&mut secret).map_err(|error| io_error("drawing random bytes for", "", error))?;
        let token = Token::from_bytes(secret);
        let number = self.catalog.next_number;
        AgentEngine::create(self.storage.clone(), number, self.options.clone())?;
        let mut next = self.catalog.clone();
        next.next_number = number + 1;
        next.entries.push(CatalogEntry { number, token_hash: token_hash(token.as_bytes()), name: String::from(name) });
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        Ok(token)
    }

    /// The number of the agent `token` opens. Every entry is compared, in constant time, so
    /// the time taken says nothing about which one matched.
    pub fn authenticate(&self, token: &Token) -> Result<u64, Error> {
        let presented = token_hash(token.as_bytes());
        let mut found = None;
        for entry in &self.catalog.entries {
            if equal_in_constant_time(&entry.token_hash, &presented) {
                found = Some(entry.number);
            }
        }
        found.ok_or(Error::UnknownToken)
    }

    /// Opens the engine of agent `number` (see [`StoreEngine::authenticate`]).
    pub fn open_agent(&self, number: u64) -> Result<AgentEngine<S>, Error> {
        AgentEngine::open(self.storage.clone(), number, self.options.clone())
    }

    /// Deletes the agent named `name` and every file of it; returns its number.
    pub fn delete_agent(&mut self, name: &str) -> Result<u64, Error> {
        let number = self.agent_number(name)?;
        let mut next = self.catalog.clone();
        next.entries.retain(|entry| entry.number != number);
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        remove_folder_files(&self.storage, &agent_folder(number))?;
        self.storage.sync_folder("").map_err(|error| io_error("syncing", "", error))?;
        Ok(number)
    }
}

fn has_agent_folders<S: Storage>(storage: &S) -> Result<bool, Error> {
    let names = storage.list("").map_err(|error| io_error("listing", "", error))?;
    Ok(names.iter().any(|name| parse_agent_folder(name).is_some()))
}

fn read_catalog<S: Storage>(storage: &S) -> Result<CatalogFile, Error> {
    let file = storage.open_file(CATALOG_FILE, false).map_err(|error| io_error("opening", CATALOG_FILE, error))?;
    let bytes = crate::engine::read_all(&file, CATALOG_FILE)?;
    CatalogFile::decode(&bytes).map_err(|reason| Error::Corrupt { file: String::from(CATALOG_FILE), offset: 0, reason })
}

fn write_catalog<S: Storage>(storage: &S, catalog: &CatalogFile) -> Result<(), Error> {
    let bytes = catalog.encode();
    let mut file = storage
        .open_file(CATALOG_TEMPORARY_FILE, true)
        .map_err(|error| io_error("creating", CATALOG_TEMPORARY_FILE, error))?;
    file.set_len(0)
        .and_then(|()| file.write_at(0, &bytes))
        .and_then(|()| file.sync())
        .map_err(|error| io_error("writing", CATALOG_TEMPORARY_FILE, error))?;
    drop(file);
    storage
        .rename(CATALOG_TEMPORARY_FILE, CATALOG_FILE)
        .map_err(|error| io_error("renaming", CATALOG_TEMPORARY_FILE, error))?;
    storage.sync_folder("").map_err(|error| io_error("syncing", "", error))
}

fn remove_folder_files<S: Storage>(storage: &S, folder: &str) -> Result<(), Error> {
    let names = storage.list(folder).map_err(|error| io_error("listing", folder, error))?;
    for name in names {
        let path = alloc::format!("{folder}/{name}");
        storage.remove_file(&path).map_err(|error| io_error("removing", &path, error))?;
    }
    storage.remove_folder(folder).map_err(|error| io_error("removing", folder, error))
}
