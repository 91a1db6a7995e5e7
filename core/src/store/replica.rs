//! The store's side of replication: what the catalog says of an agent being shipped, and taking
//! an agent restored from a replica into the catalog.
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
use crate::limits::{self, AGENTS_PER_STORE_MAX};
use crate::log::names::{agent_folder, CATALOG_FILE};
use crate::replica::head::ReplicaHead;
use crate::storage::Storage;

pub use crate::replica::AgentEntry;

impl<S: Storage + Clone> StoreEngine<S> {
    /// Every agent as the catalog lists it, in the order they were created.
    #[must_use]
    pub fn agent_entries(&self) -> alloc::vec::Vec<AgentEntry> {
        // Spaces are not shipped yet: a replica holds agents only.
        self.agents()
            .map(|entry| AgentEntry {
                number: entry.number,
                name: entry.name.clone(),
                token_hash: entry.token_hash,
                encrypted: entry.encrypted,
            })
            .collect()
    }

    /// The storage the store's files are in: a shipper reads an agent's files through it.
    #[must_use]
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Takes in the agent a replica's `head` describes: makes its folder, lets `write` fill it
    /// (and return the fingerprint the files verify to), then adds the agent to the catalog. A
    /// failure removes what was written, its files overwritten with zeros first.
    ///
    /// # Errors
    ///
    /// - `Error::AgentExists` when the store has an agent of that name, or of that number.
    /// - `Error::Corrupt` ([`CorruptReason::CatalogTokenHashHeldTwice`]) when an agent of the
    ///   store has the head's token hash: the head grants another agent's token.
    /// - `Error::LimitExceeded` when the store holds the most agents.
    /// - Whatever `write` returns; `Error::Io` when the storage fails.
    pub fn adopt_agent(
        &mut self,
        head: &ReplicaHead,
        write: impl FnOnce(&S) -> Result<Fingerprint, Error>,
    ) -> Result<Fingerprint, Error> {
        limits::check(Limit::AgentsPerStore, self.agents().count() + 1, AGENTS_PER_STORE_MAX)?;
        let taken = self.catalog.entries.iter().find(|entry| entry.name == head.name || entry.number == head.agent);
        if let Some(entry) = taken {
            return Err(Error::AgentExists { name: entry.name.clone() });
        }
        // Whatever the caller checked: a catalog never holds two agents under one token.
        if self.catalog.entries.iter().any(|entry| entry.token_hash == head.token_hash)
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
            space: false,
        };
        next.entries.push(entry);
        write_catalog(&self.storage, &next)?;
        self.catalog = next;
        Ok(fingerprint)
    }
}
