//! The writes of a space's log: each names its author, and member records change roles.

use alloc::vec::Vec;

use super::append::Entry;
use super::AgentEngine;
use crate::engine::space_ledger::SpaceLedger;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::limits::Options;
use crate::role::Role;
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// Makes a space's folder and first segment, then its first member record, which makes
    /// `first_admin` its admin and names it as its author.
    pub(crate) fn create_space(
        storage: S,
        number: u64,
        options: Options,
        first_admin: u64,
    ) -> Result<AgentEngine<S>, Error> {
        let mut log = AgentEngine::create(storage, number, options)?;
        log.space = Some(SpaceLedger::default());
        log.write_member(first_admin, first_admin, Role::Admin)?;
        Ok(log)
    }

    /// Writes a member record, by `author`, giving `agent` the role `role`.
    pub(crate) fn write_member(&mut self, author: u64, agent: u64, role: Role) -> Result<(), Error> {
        if self.space.is_none() {
            return Err(Error::Internal { what: InternalRule::MemberRecordsOnlyInASpace });
        }
        self.write_as(author, |log| log.write_entries(&[Entry::Member { agent, role }])).map(|_| ())
    }

    /// Runs `write` with its records naming `author`.
    pub(crate) fn write_as<T>(
        &mut self,
        author: u64,
        write: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.author = Some(author);
        let outcome = write(self);
        self.author = None;
        outcome
    }

    /// The author the record of entry `index` of the write under way names, in a space.
    pub(crate) fn author_of_entry(&self, index: usize) -> Option<u64> {
        self.entry_authors.get(index).copied().or(self.author)
    }

    /// Runs `collect` on a batch of the space's lots and memories by several members: it
    /// returns, with its value, the author of each write it staged, in order, and they are
    /// written as one durable write, each record naming its own author.
    pub(crate) fn batch_by_authors<T>(
        &mut self,
        collect: impl FnOnce(&mut super::batch::Batch<'_, S>) -> Result<(T, Vec<u64>), Error>,
    ) -> Result<T, Error> {
        let (value, _) = self.batch_then(collect, |engine, writes, (_, authors)| {
            if authors.len() != writes.len() {
                return Err(Error::Internal { what: InternalRule::EveryGroupedWriteHasAnAuthor });
            }
            engine.entry_authors = core::mem::take(authors);
            let written = engine.write_batch(writes);
            engine.entry_authors.clear();
            written
        })?;
        Ok(value)
    }

    /// The members and authors of a space; `None` for an agent.
    pub(crate) fn space_ledger(&self) -> Option<&SpaceLedger> {
        self.space.as_ref()
    }
}
