//! The store: the catalog of agents and spaces, the agents' tokens, and their folders.
//!
//! The catalog is rewritten whole on each change (temporary file, sync, rename, folder sync).
//! An agent's folder is made before the catalog names it and removed after the catalog stops
//! naming it, so a crash at any point leaves at most an orphan folder, which the next open
//! removes.
//!
//! Removing an agent's folder touches only the names the engine makes there (segments, the
//! snapshot, the erase journal, an encrypted agent's key files and their temporary rewrites).
//! Anything else (a stray file or folder, a link) is left alone and listed in
//! [`StoreEngine::left_behind`], with the folder that holds it: one odd folder never fails a
//! delete or the open of the store. An orphan folder's files are overwritten with zeros, synced,
//! before they are removed: the orphan may be a plaintext agent that was just encrypted (see
//! [`StoreEngine::encrypt_agent`]), whose text must never be left behind as free blocks.

use alloc::string::String;
use alloc::vec::Vec;

use crate::codec::catalog_file::{CatalogEntry, CatalogFile};
use crate::corrupt_reason::CorruptReason;
use crate::digest::{equal_in_constant_time, token_hash};
use crate::engine::{io_error, AgentEngine};
use crate::error::Error;
use crate::error_facts::{Limit, NameProblem, StorageOperation};
use crate::left_behind::LeftBehind;
use crate::limits::{self, Options, AGENTS_PER_STORE_MAX, AGENT_NAME_MAX_BYTES, SPACES_PER_STORE_MAX};
use crate::log::names::{agent_folder, is_agent_file_name, parse_agent_folder, CATALOG_FILE, CATALOG_TEMPORARY_FILE};
use crate::role::Role;
use crate::seal::AgentSecrets;
use crate::space::{Grantee, SpaceEngine};
use crate::storage::{NameKind, Storage, StorageFile};
use crate::token::{Token, PREFIX as TOKEN_PREFIX};

mod encrypt;
mod replica;

pub use crate::agent_key::AgentKey;

pub use replica::AgentEntry;

/// The agents of one store folder.
#[derive(Debug)]
pub struct StoreEngine<S: Storage + Clone> {
    storage: S,
    options: Options,
    catalog: CatalogFile,
    left_behind: Vec<LeftBehind>,
}

impl<S: Storage + Clone> StoreEngine<S> {
    /// Opens the store in `storage`, making an empty one if the folder holds none, and removes
    /// what interrupted creates and deletes left behind.
    ///
    /// # Errors
    ///
    /// - `Error::LimitExceeded` when `options` are out of range.
    /// - `Error::Corrupt` when the catalog is damaged, or missing while agent folders exist.
    /// - `Error::Io` when the storage fails.
    pub fn open(storage: S, options: Options) -> Result<StoreEngine<S>, Error> {
        options.validate()?;
        let exists =
            |path: &str| storage.exists(path).map_err(|error| io_error(StorageOperation::Checking, path, error));
        if exists(CATALOG_TEMPORARY_FILE)? {
            storage
                .remove_file(CATALOG_TEMPORARY_FILE)
                .map_err(|error| io_error(StorageOperation::Removing, CATALOG_TEMPORARY_FILE, error))?;
        }
        let catalog = if exists(CATALOG_FILE)? {
            read_catalog(&storage)?
        } else if has_agent_folders(&storage)? {
            // Never start afresh over agents whose catalog is gone: that would delete them.
            let reason = CorruptReason::CatalogMissingWhileAgentFoldersExist;
            return Err(Error::Corrupt { file: String::from(CATALOG_FILE), offset: 0, reason });
        } else {
            let empty = CatalogFile { next_number: 1, entries: Vec::new() };
            write_catalog(&storage, &empty)?;
            empty
        };
        let mut store = StoreEngine { storage, options, catalog, left_behind: Vec::new() };
        store.remove_orphan_folders()?;
        // The catalog just read may be a rename whose folder sync failed, and the temporary file
        // removed above is gone only once the folder is synced: what open serves must be durable.
        store.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        Ok(store)
    }

    fn remove_orphan_folders(&mut self) -> Result<(), Error> {
        let names = self.storage.list("").map_err(|error| io_error(StorageOperation::Listing, "", error))?;
        let mut removed = false;
        for name in names {
            let Some(number) = parse_agent_folder(&name) else { continue };
            if self.catalog.entries.iter().any(|entry| entry.number == number) {
                continue;
            }
            // A create that crashed before the catalog named the agent, a delete that crashed
            // after the catalog stopped naming it, or either side of an encryption that crashed
            // (the copy before the switch, the plaintext agent after it): nothing here is
            // acknowledged data, and the plaintext one must not stay readable in free blocks.
            let left = remove_agent_files(&self.storage, &name, FileRemoval::ZerosFirst)?;
            self.left_behind.extend(left);
            removed = true;
        }
        if removed {
            self.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        }
        Ok(())
    }

    /// What removing deleted agents' folders left in place, since this open: names cheesedb
    /// did not make, links, and anything else that is not what the engine puts there. Empty
    /// when every folder went.
    #[must_use]
    pub fn left_behind(&self) -> &[LeftBehind] {
        &self.left_behind
    }

    /// The settings every agent is opened with.
    #[must_use]
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The catalog's agents, without its spaces.
    fn agents(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.catalog.entries.iter().filter(|entry| !entry.space)
    }

    /// The names of the agents, in the order they were created.
    #[must_use]
    pub fn agent_names(&self) -> Vec<String> {
        self.agents().map(|entry| entry.name.clone()).collect()
    }

    /// The number of the agent named `name`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name.
    pub fn agent_number(&self, name: &str) -> Result<u64, Error> {
        self.agents()
            .find(|entry| entry.name.as_bytes() == name.as_bytes())
            .map(|entry| entry.number)
            .ok_or_else(|| Error::UnknownAgent { name: String::from(name) })
    }

    /// The name of agent `number`.
    ///
    /// # Errors
    ///
    /// `Error::AgentDeleted` once the agent is gone from the catalog.
    pub fn agent_name(&self, number: u64) -> Result<String, Error> {
        self.agents().find(|entry| entry.number == number).map(|entry| entry.name.clone()).ok_or(Error::AgentDeleted)
    }

    /// Creates an agent; returns its token, which the store does not keep (only its hash).
    ///
    /// # Errors
    ///
    /// - `Error::InvalidName` when `name` is empty or starts with `cheesedb-`, as tokens do.
    /// - `Error::LimitExceeded` when `name` is too long or the store holds the most agents.
    /// - `Error::AgentExists` when an agent has that name already.
    /// - `Error::Io` when the storage fails.
    pub fn create_agent(&mut self, name: &str) -> Result<Token, Error> {
        self.create_agent_with(name, false)
    }

    /// Creates an encrypted agent named `name` and returns its token. Its contents (a lot's
    /// label too) and vectors are sealed under keys derived from the token, which the store never
    /// keeps: the folder alone reveals none of them, and an Erase destroys the keys of what it
    /// erases. Everything else works as for [`StoreEngine::create_agent`].
    ///
    /// # Errors
    ///
    /// As [`StoreEngine::create_agent`].
    pub fn create_encrypted_agent(&mut self, name: &str) -> Result<Token, Error> {
        self.create_agent_with(name, true)
    }

    fn create_agent_with(&mut self, name: &str, encrypted: bool) -> Result<Token, Error> {
        check_agent_name(name)?;
        limits::check(Limit::AgentsPerStore, self.agents().count() + 1, AGENTS_PER_STORE_MAX)?;
        if self.agent_number(name).is_ok() {
            return Err(Error::AgentExists { name: String::from(name) });
        }
        let mut secret = [0u8; 32];
        self.storage
            .fill_random(&mut secret)
            .map_err(|error| io_error(StorageOperation::DrawingRandomBytes, "", error))?;
        let token = Token::from_bytes(secret);
        let number = self.catalog.next_number;
        let (storage, options) = (self.storage.clone(), self.options.clone());
        if encrypted {
            AgentEngine::create_encrypted(storage, number, options, AgentSecrets::from_token(token.as_bytes()))?;
        } else {
            AgentEngine::create(storage, number, options)?;
        }
        let mut next = self.catalog.clone();
        next.next_number = number + 1;
        let token_hash = token_hash(token.as_bytes());
        next.entries.push(CatalogEntry { number, token_hash, name: String::from(name), encrypted, space: false });
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        Ok(token)
    }

    /// The key of the agent `token` opens. Every entry is compared, in constant time, so the
    /// time taken says nothing about which one matched.
    ///
    /// # Errors
    ///
    /// `Error::UnknownToken` when no agent of this store has that token.
    pub fn authenticate(&self, token: &Token) -> Result<AgentKey, Error> {
        let presented = token_hash(token.as_bytes());
        let mut found = None;
        for entry in self.agents() {
            if equal_in_constant_time(&entry.token_hash, &presented) {
                found = Some(entry.number);
            }
        }
        found.map(|number| AgentKey::new(number, *token.as_bytes())).ok_or(Error::UnknownToken)
    }

    /// Opens the engine of the agent `key` names; only [`StoreEngine::authenticate`] makes a
    /// key, so a token is the only way in.
    ///
    /// # Errors
    ///
    /// `Error::Io` when the storage fails, `Error::Corrupt` when the agent's files do not hold a
    /// valid log.
    pub fn open_agent(&self, key: AgentKey) -> Result<AgentEngine<S>, Error> {
        let (storage, options) = (self.storage.clone(), self.options.clone());
        if self.is_encrypted(key.number()) {
            AgentEngine::open_encrypted(storage, key.number(), options, AgentSecrets::from_token(key.token()))
        } else {
            AgentEngine::open(storage, key.number(), options)
        }
    }

    /// Checks the files of the agent named `name` without its token and without opening it:
    /// every check that needs no key (checksums, digests, the chain, commit markers; for an
    /// encrypted agent also that every content is sealed and every key file slot passes its
    /// check). Returns the head fingerprint of what the files hold. An agent's own `verify`
    /// does all of this and, with the token, opens every sealed content too.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; `Error::Corrupt` for the first damage;
    /// `Error::Io` when a file cannot be read.
    pub fn verify_agent_without_token(&self, name: &str) -> Result<crate::Fingerprint, Error> {
        let number = self.agent_number(name)?;
        crate::engine::verify_files_without_token(&self.storage, number, self.is_encrypted(number))
    }

    /// Whether agent `number` is encrypted (false for a number the catalog does not list).
    #[must_use]
    pub fn is_encrypted(&self, number: u64) -> bool {
        self.catalog.entries.iter().any(|entry| entry.number == number && entry.encrypted)
    }

    /// Opens the engine of agent `number` without a token: for the simulator and the fuzz
    /// targets, which reopen agents after a crash by the numbers the catalog lists. Not part of
    /// the documented API; users go through [`StoreEngine::open_agent`].
    ///
    /// # Errors
    ///
    /// As [`StoreEngine::open_agent`].
    /// An encrypted agent cannot be opened without its token: `Error::UnknownToken`.
    #[doc(hidden)]
    pub fn open_agent_by_number(&self, number: u64) -> Result<AgentEngine<S>, Error> {
        if self.is_encrypted(number) {
            return Err(Error::UnknownToken);
        }
        AgentEngine::open(self.storage.clone(), number, self.options.clone())
    }

    /// The names of the spaces, in the order they were created.
    #[must_use]
    pub fn space_names(&self) -> Vec<String> {
        self.spaces().map(|entry| entry.name.clone()).collect()
    }

    /// The name of the space numbered `number` (as a shared node names its space).
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` (naming the number) when no space has it.
    pub fn space_name(&self, number: u64) -> Result<String, Error> {
        let entry = self.spaces().find(|entry| entry.number == number);
        entry.map(|entry| entry.name.clone()).ok_or_else(|| Error::UnknownSpace { name: alloc::format!("{number}") })
    }

    fn spaces(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.catalog.entries.iter().filter(|entry| entry.space)
    }

    /// Creates a space named `name` whose first member, and admin, is `first_admin`, and opens
    /// it. Space names follow agent names, and may not hold `:` or `,`.
    ///
    /// # Errors
    ///
    /// - `Error::InvalidName` for an empty name, one like a token, or one holding `:` or `,`.
    /// - `Error::LimitExceeded` when the name is too long or the store holds the most spaces.
    /// - `Error::SpaceExists` when a space has that name already.
    /// - `Error::Io` when the storage fails.
    pub fn create_space(&mut self, name: &str, first_admin: AgentKey) -> Result<SpaceEngine<S>, Error> {
        check_space_name(name)?;
        limits::check(Limit::SpacesPerStore, self.spaces().count() + 1, SPACES_PER_STORE_MAX)?;
        if self.spaces().any(|entry| entry.name == name) {
            return Err(Error::SpaceExists { name: String::from(name) });
        }
        let number = self.catalog.next_number;
        let (storage, options) = (self.storage.clone(), self.options.clone());
        // The folder and its first record are durable before the catalog names the space: a
        // crash between leaves an orphan folder, which the next open removes.
        let space = SpaceEngine::create(storage, number, options, name, first_admin.number())?;
        let mut next = self.catalog.clone();
        next.next_number = number + 1;
        let entry =
            CatalogEntry { number, token_hash: [0; 32], name: String::from(name), encrypted: false, space: true };
        next.entries.push(entry);
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        Ok(space)
    }

    /// The number of the space named `name`.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` when no space has that name.
    pub fn space_number(&self, name: &str) -> Result<u64, Error> {
        let entry = self.spaces().find(|entry| entry.name == name);
        entry.map(|entry| entry.number).ok_or_else(|| Error::UnknownSpace { name: String::from(name) })
    }

    /// The agent named `name`, as one a space's role may be granted to.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name.
    pub fn grantee(&self, name: &str) -> Result<Grantee, Error> {
        self.agent_number(name).map(Grantee::new)
    }

    /// Opens the space named `name` for `member`, which must hold a role in it.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` when no space has that name or `member` holds no role in it (one
    /// answer for both); `Error::Corrupt` when its log fails a check, the roles included;
    /// `Error::Io` when the storage fails.
    pub fn open_space(&self, member: AgentKey, name: &str) -> Result<SpaceEngine<S>, Error> {
        let unknown = || Error::UnknownSpace { name: String::from(name) };
        let entry = self.spaces().find(|entry| entry.name == name).ok_or_else(unknown)?;
        let space = SpaceEngine::open(self.storage.clone(), entry.number, self.options.clone(), name)?;
        if space.role_of(member.number()) == Role::None {
            return Err(unknown());
        }
        Ok(space)
    }

    /// Opens space number `number`, whatever role anyone holds in it, to apply its recalls to
    /// an agent holding shared nodes of it ([`AgentEngine::spaces_shared_from`],
    /// [`SpaceEngine::apply_recalls_to`]): a revoked member too. Every other call on it still
    /// asks for its member's role.
    ///
    /// # Errors
    ///
    /// `Error::Corrupt` (`SharedNodeOfUnknownSpace`, of the catalog) when the catalog lists no
    /// such space, since a space is never deleted; as [`StoreEngine::open_space`] otherwise.
    pub fn open_space_to_apply_recalls(&self, number: u64) -> Result<SpaceEngine<S>, Error> {
        let entry = self.spaces().find(|entry| entry.number == number).ok_or_else(|| Error::Corrupt {
            file: String::from(CATALOG_FILE),
            offset: 0,
            reason: CorruptReason::SharedNodeOfUnknownSpace,
        })?;
        SpaceEngine::open(self.storage.clone(), entry.number, self.options.clone(), &entry.name)
    }

    /// Deletes the agent named `name` and every file the engine made for it; returns its
    /// number. The delete is done once the catalog stops naming the agent; what its folder
    /// holds that the engine did not make goes to [`StoreEngine::left_behind`], never to an
    /// error. A storage failure while removing files is an error, and the next open finishes.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; `Error::Io` when the storage fails.
    pub fn delete_agent(&mut self, name: &str) -> Result<u64, Error> {
        let number = self.agent_number(name)?;
        let mut next = self.catalog.clone();
        next.entries.retain(|entry| entry.number != number || entry.space);
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        let left = remove_agent_files(&self.storage, &agent_folder(number), FileRemoval::Unlink)?;
        self.left_behind.extend(left);
        self.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        Ok(number)
    }
}

/// Checks a space name: an agent's rules, and no `:` or `,`, which a leg uses to name a space's
/// node (`team:3,12`).
fn check_space_name(name: &str) -> Result<(), Error> {
    check_agent_name(name)?;
    if name.contains([':', ',']) {
        return Err(Error::InvalidName { reason: NameProblem::SpaceNameWithSeparator });
    }
    Ok(())
}

/// Checks an agent name: not empty, not like a token, within its limit.
fn check_agent_name(name: &str) -> Result<(), Error> {
    if name.is_empty() {
        return Err(Error::InvalidName { reason: NameProblem::AgentNameEmpty });
    }
    if name.trim().starts_with(TOKEN_PREFIX) {
        // Commands and tools take a name or a token in one place, and read such a name as a
        // token: it could never be reached by its name.
        return Err(Error::InvalidName { reason: NameProblem::AgentNameLikeToken });
    }
    limits::check(Limit::AgentNameBytes, name.len(), AGENT_NAME_MAX_BYTES)
}

fn has_agent_folders<S: Storage>(storage: &S) -> Result<bool, Error> {
    let names = storage.list("").map_err(|error| io_error(StorageOperation::Listing, "", error))?;
    Ok(names.iter().any(|name| parse_agent_folder(name).is_some()))
}

fn read_catalog<S: Storage>(storage: &S) -> Result<CatalogFile, Error> {
    let file = storage
        .open_file(CATALOG_FILE, false)
        .map_err(|error| io_error(StorageOperation::Opening, CATALOG_FILE, error))?;
    let bytes = crate::engine::read_all(&file, CATALOG_FILE)?;
    let corrupt = |reason| Error::Corrupt { file: String::from(CATALOG_FILE), offset: 0, reason };
    let catalog = CatalogFile::decode(&bytes).map_err(corrupt)?;
    // One token would open whichever entry matched last: refuse the catalog rather than guess.
    let agents: Vec<&CatalogEntry> = catalog.entries.iter().filter(|entry| !entry.space).collect();
    let repeated = agents
        .iter()
        .enumerate()
        .any(|(index, entry)| agents.iter().skip(index + 1).any(|other| other.token_hash == entry.token_hash));
    if repeated {
        return Err(corrupt(CorruptReason::CatalogTokenHashHeldTwice));
    }
    Ok(catalog)
}

fn write_catalog<S: Storage>(storage: &S, catalog: &CatalogFile) -> Result<(), Error> {
    stage_catalog(storage, catalog)?;
    storage
        .rename(CATALOG_TEMPORARY_FILE, CATALOG_FILE)
        .map_err(|error| io_error(StorageOperation::Renaming, CATALOG_TEMPORARY_FILE, error))?;
    storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))
}

/// Writes `catalog` to the temporary file, durably; the rename that puts it in force is the
/// caller's.
fn stage_catalog<S: Storage>(storage: &S, catalog: &CatalogFile) -> Result<(), Error> {
    let bytes = catalog.encode();
    let mut file = storage
        .open_file(CATALOG_TEMPORARY_FILE, true)
        .map_err(|error| io_error(StorageOperation::Creating, CATALOG_TEMPORARY_FILE, error))?;
    file.set_len(0)
        .and_then(|()| file.write_at(0, &bytes))
        .and_then(|()| file.sync())
        .map_err(|error| io_error(StorageOperation::Writing, CATALOG_TEMPORARY_FILE, error))
}

/// What happens to each file of an agent folder being removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileRemoval {
    /// The name is removed.
    Unlink,
    /// The bytes are overwritten with zeros where they lie and synced, then the name is removed:
    /// for a folder that may hold plaintext nobody may read again.
    ZerosFirst,
}

/// Bytes of zeros written at once when a file is overwritten.
const ZEROS_AT_ONCE_BYTES: u64 = 1024 * 1024;

/// Overwrites every byte of the file at `path` with zeros where it lies, and syncs.
fn overwrite_with_zeros<S: Storage>(storage: &S, path: &str) -> Result<(), Error> {
    let mut file = storage.open_file(path, false).map_err(|error| io_error(StorageOperation::Opening, path, error))?;
    let length = file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
    let chunk = usize::try_from(length.min(ZEROS_AT_ONCE_BYTES)).unwrap_or(0);
    let zeros = alloc::vec![0u8; chunk];
    let mut offset = 0u64;
    while offset < length {
        let part_bytes = (length - offset).min(ZEROS_AT_ONCE_BYTES);
        // `part_bytes` is at most the length of `zeros`.
        let part = zeros.get(..usize::try_from(part_bytes).unwrap_or(chunk)).unwrap_or_default();
        file.write_at(offset, part).map_err(|error| io_error(StorageOperation::Overwriting, path, error))?;
        offset += part_bytes;
    }
    file.sync().map_err(|error| io_error(StorageOperation::Syncing, path, error))
}

/// Removes the files the engine makes in the agent folder `folder` (as `removal` says), then
/// the folder if nothing else is in it; returns what stayed. A link is never followed: a folder or a file that is a
/// link (or anything else the engine does not make) is left where it is, and removing a name
/// removes the name itself. A failure of the storage is an error (the next open tries again).
fn remove_agent_files<S: Storage>(storage: &S, folder: &str, removal: FileRemoval) -> Result<Vec<LeftBehind>, Error> {
    let mut left = Vec::new();
    let holds =
        |path: &str, kind| storage.holds(path, kind).map_err(|error| io_error(StorageOperation::Checking, path, error));
    if !holds(folder, NameKind::Folder)? {
        if storage.exists(folder).map_err(|error| io_error(StorageOperation::Checking, folder, error))? {
            let reason = String::from("not a folder cheesedb made (a link or a file), so left alone");
            left.push(LeftBehind { path: String::from(folder), reason });
        }
        return Ok(left);
    }
    let names = storage.list(folder).map_err(|error| io_error(StorageOperation::Listing, folder, error))?;
    for name in names {
        let path = alloc::format!("{folder}/{name}");
        if !is_agent_file_name(&name) {
            left.push(LeftBehind { path, reason: String::from("not made by cheesedb, so left alone") });
        } else if holds(&path, NameKind::File)? {
            if removal == FileRemoval::ZerosFirst {
                overwrite_with_zeros(storage, &path)?;
            }
            storage.remove_file(&path).map_err(|error| io_error(StorageOperation::Removing, &path, error))?;
        } else {
            left.push(LeftBehind {
                path,
                reason: String::from("not a plain file (a link or a folder), so left alone"),
            });
        }
    }
    if left.is_empty() {
        storage.remove_folder(folder).map_err(|error| io_error(StorageOperation::Removing, folder, error))?;
    }
    Ok(left)
}
