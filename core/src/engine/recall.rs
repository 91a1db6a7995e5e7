//! Recall: a lot or memory dies, and with it what was learned from it.

use alloc::vec::Vec;

use super::active_log::PoisonCause;
use super::append::Entry;
use super::replay::apply_recall_plan;
use super::AgentEngine;
use crate::codec::recalled_ids::{RecalledIds, RECALLED_IDS_MAX};
use crate::convert::bounded_count_u32;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::graph::RecallPlan;
use crate::id::{Id, Mode, Removal};
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// What a recall of `id` would remove (not `id` itself), ascending. Writes nothing. The
    /// answer is that of an Untrusted recall; see [`AgentEngine::preview_recall_with`].
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::preview_recall_with`].
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.preview_recall_with(id, mode, Removal::Untrusted)
    }

    /// What `recall(id, mode, removal)` would return, or the error it would refuse with.
    /// Writes nothing.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted.
    /// - `Error::UnknownId` when no lot or memory has `id`.
    /// - `Error::AlreadyRecalled` when `id` was recalled and this recall would change nothing.
    pub fn preview_recall_with(&self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.check_readable()?;
        let plan = self.graph.plan_recall(id.get(), mode, removal)?;
        plan.refuse_if_idle()?;
        Ok(plan.removed.into_iter().map(Id::from).collect())
    }

    /// Recalls `id`: it dies, and so does every memory that `mode` says depended on it. Returns
    /// those memories, ascending. With `Removal::Erase`, their text and the text of `id` are
    /// gone from every file before this returns.
    ///
    /// An id recalled before may be recalled again: the new recall applies its own mode and
    /// removal (a Strict recall after a Fair one removes what Strict reaches now; an Erase
    /// after an Untrusted one erases the id and the recalled memories with it in their
    /// history). It is refused with `AlreadyRecalled` only when it would change nothing.
    ///
    /// # Errors
    ///
    /// - `Error::AgentDeleted` when the agent was deleted, `Error::Poisoned` after a failed write.
    /// - `Error::UnknownId` or `Error::AlreadyRecalled`, as [`AgentEngine::preview_recall_with`].
    /// - With `Removal::Erase`, when a graph loaded from a snapshot does not check out against
    ///   the log: `Error::Corrupt` (or `Error::Io`); nothing is written, the engine is poisoned.
    /// - As [`AgentEngine::add_lot`] for the recall record. Once it is stored, a failed erasure
    ///   is `Error::OutcomeUnknown` and poisons the engine; the next open finishes it.
    pub fn recall(&mut self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.check_writable()?;
        let plan = self.graph.plan_recall(id.get(), mode, removal)?;
        plan.refuse_if_idle()?;
        self.carry_out(plan, mode, removal)
    }

    /// Recalls every id of `ids` at once, as [`AgentEngine::recall`] does one: in one record of
    /// them all and one durable write (one of each per [`RECALLED_IDS_MAX`] ids, planned as
    /// replay plans it). Returns the memories that died, ascending; a recall that would change
    /// nothing writes nothing and returns none.
    pub(crate) fn recall_all(&mut self, ids: &[u64], mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.check_writable()?;
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut removed = Vec::new();
        for part in ids.chunks(RECALLED_IDS_MAX) {
            let plan = self.graph.plan_recall_of_all(part, mode, removal)?;
            if !plan.is_idle() {
                removed.extend(self.carry_out(plan, mode, removal)?);
            }
        }
        removed.sort_unstable();
        removed.dedup();
        Ok(removed)
    }

    /// Writes the recall record of `plan` (one of all its recalled ids when there are several),
    /// then applies it: the graph, the search index, and with Erase the files.
    fn carry_out(&mut self, plan: RecallPlan, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        if removal == Removal::Erase {
            self.count_rewrite();
            // What an Erase destroys is computed from the graph: after a snapshot load, the
            // graph must first be found to match the log. (A refusal before reads nothing.)
            self.confirm_graph_before_destroying()?;
        }
        // The record is the durable intent: if an erasure below is cut short by a crash, the
        // next open finishes it.
        match plan.recalled.as_slice() {
            [id] => self.append(&[Entry::Recall { id: *id, mode, removal }])?,
            several => {
                let malformed = || Error::Internal { what: InternalRule::RecalledIdsAscending };
                let raw = RecalledIds::encode(several).ok_or_else(malformed)?;
                let ids = RecalledIds::parse(bounded_count_u32(several.len())?, &raw).ok_or_else(malformed)?;
                self.append(&[Entry::RecallAll { ids, mode, removal }])?
            }
        };
        self.apply_carried_out(plan, mode, removal)
    }

    /// Applies `plan`, whose record is durable: the graph, the search index, and with Erase
    /// the files.
    fn apply_carried_out(&mut self, plan: RecallPlan, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        apply_recall_plan(&mut self.graph, self.space.as_mut(), &plan, mode, removal);
        // The mutant leaves the dead in the index, where searches would find them.
        if let Some(index) = self.search.as_mut().filter(|_| !mutant!(SearchKeepsRecalled)) {
            index.forget(plan.recalled.iter().chain(&plan.removed).copied());
        }
        if !plan.erase.is_empty() {
            self.erase_requested_content(&plan.erase)?;
        }
        Ok(plan.removed.into_iter().map(Id::from).collect())
    }

    /// Redacts, in place, every record covered by an Erase that still keeps its text; on an
    /// encrypted agent, destroys the keys of every node in `covered` (the nodes this Erase
    /// covers) instead.
    fn erase_requested_content(&mut self, covered: &[u64]) -> Result<(), Error> {
        let result =
            if self.sealing.is_some() { self.erase_by_destroying_keys(covered) } else { self.erase_in_place() };
        if result.is_err() {
            // The recall is durable but its erasure is not finished: refuse further writes so
            // the caller reopens, and the open completes the erasure.
            self.log.poison(PoisonCause::EraseCutShort);
        }
        result.map(|_| ()).map_err(|error| match error {
            // The recall record is on disk and some overwrites may be too: the caller must know
            // the recall happened and that its text goes at the next open.
            Error::Io { operation, path, kind, source } => Error::OutcomeUnknown { operation, path, kind, source },
            other => other,
        })
    }
}
