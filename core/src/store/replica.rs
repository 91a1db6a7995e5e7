//! The store's side of replication: what the catalog says of an agent or space being shipped,
//! and taking one restored from a replica into the catalog.
//!
//! A restored agent keeps its number (its records and its chain carry it), name and token hash,
//! so its own token opens it and its fingerprints stay valid. The crash argument is that of
//! creating an agent: the folder and its files are written and synced before the catalog names
//! them, so a crash leaves at most an orphan folder, which the next open removes (overwriting
//! its files with zeros first).

use alloc::string::String;

use super::{remove_agent_files, write_catalog, FileRemoval, StoreEngine};
use crate::codec::catalog_file::CatalogEntry;
use crate::corrupt_reason::CorruptReason;
use crate::engine::io_error;
use crate::error::Error;
use crate::error_facts::{Limit, StorageOperation};
use crate::fingerprint::Fingerprint;
use crate::limits::{self, AGENTS_PER_STORE_MAX, SPACES_PER_STORE_MAX};
use crate::log::names::{agent_folder, CATALOG_FILE};
use crate::replica::head::ReplicaHead;
use crate::storage::Storage;

pub use crate::replica::AgentEntry;

impl<S: Storage + Clone> StoreEngine<S> {
    /// Every agent and space as the catalog lists them, in the order they were created: what
    /// a replica ships.
    #[must_use]
    pub fn replicated_entries(&self) -> alloc::vec::Vec<AgentEntry> {
        self.catalog
            .entries
            .iter()
            .map(|entry| AgentEntry {
                number: entry.number,
                name: entry.name.clone(),
                token_hash: entry.token_hash,
                encrypted: entry.encrypted,
                space: entry.space,
            })
            .collect()
    }

    /// The storage the store's files are in: a shipper reads an agent's files through it.
    #[must_use]
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Takes in the agent or space a replica's `head` describes: makes its folder, lets `write` fill it
    /// (and return the fingerprint the files verify to), then adds the agent to the catalog. A
    /// failure removes what was written, its files overwritten with zeros first.
    ///
    /// # Errors
    ///
    /// - `Error::AgentExists` when the store has an agent of that name, or anything of that
    ///   number; `Error::SpaceExists` for a space's head when it has a space of that name.
    /// - `Error::Corrupt` ([`CorruptReason::CatalogTokenHashHeldTwice`]) when an agent of the
    ///   store has the head's token hash: the head grants another agent's token.
    /// - `Error::LimitExceeded` when the store holds the most agents (or spaces).
    /// - Whatever `write` returns; `Error::Io` when the storage fails.
    pub fn adopt(
        &mut self,
        head: &ReplicaHead,
        write: impl FnOnce(&S) -> Result<Fingerprint, Error>,
    ) -> Result<Fingerprint, Error> {
        if head.space {
            limits::check(Limit::SpacesPerStore, self.spaces().count() + 1, SPACES_PER_STORE_MAX)?;
        } else {
            limits::check(Limit::AgentsPerStore, self.agents().count() + 1, AGENTS_PER_STORE_MAX)?;
        }
        let same_name = |entry: &CatalogEntry| entry.space == head.space && entry.name == head.name;
        let taken = self.catalog.entries.iter().find(|entry| same_name(entry) || entry.number == head.agent);
        match taken {
            Some(entry) if entry.space && head.space => return Err(Error::SpaceExists { name: entry.name.clone() }),
            Some(entry) => return Err(Error::AgentExists { name: entry.name.clone() }),
            None => {}
        }
        // Whatever the caller checked: a catalog never holds two agents under one token (a
        // space's head holds no token: its decoding refused any other than zeros).
        if !head.space
            && self.agents().any(|entry| entry.token_hash == head.token_hash)
            && !mutant!(RestoreTrustsHeadGrant)
        {
            let reason = CorruptReason::CatalogTokenHashHeldTwice;
            return Err(Error::Corrupt { file: String::from(CATALOG_FILE), offset: 0, reason });
        }
        let folder = agent_folder(head.agent);
        self.storage.create_folder(&folder).map_err(|error| io_error(StorageOperation::Creating, &folder, error))?;
        self.storage.sync_folder("").map_err(|error| io_error(StorageOperation::Syncing, "", error))?;
        let written = write(&self.storage);
        let fingerprint = match written {
            Ok(fingerprint) => fingerprint,
            Err(error) => {
                // Nothing names the folder: clear it now rather than at the next open.
                let _ = remove_agent_files(&self.storage, &folder, FileRemoval::ZerosFirst);
                return Err(error);
            }
        };
        let mut next = self.catalog.clone();
        next.next_number = next.next_number.max(head.agent.saturating_add(1));
        let entry = CatalogEntry {
            number: head.agent,
            token_hash: head.token_hash,
            name: head.name.clone(),
            encrypted: head.encrypted,
            space: head.space,
        };
        next.entries.push(entry);
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        Ok(fingerprint)
    }
}
