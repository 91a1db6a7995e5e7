//! Recall: a lot or memory dies, and with it what was learned from it.

use alloc::vec::Vec;

use super::append::Entry;
use super::AgentEngine;
use crate::error::Error;
use crate::id::{Id, Mode, Removal};
use crate::storage::Storage;

impl<S: Storage> AgentEngine<S> {
    /// What a recall of `id` would remove (not `id` itself), ascending. Writes nothing.
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.check_readable()?;
        let removed = self.graph.preview_recall(id.get(), mode)?;
        Ok(removed.into_iter().map(Id::from).collect())
    }

    /// Recalls `id`: it dies, and so does every memory that `mode` says depended on it. Returns
    /// those memories, ascending. With `Removal::Erase`, their text and the text of `id` are
    /// gone from every file before this returns; an already recalled `id` may be recalled
    /// again with Erase to erase what an Untrusted recall left on disk.
    pub fn recall(&mut self, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.check_writable()?;
        let target = id.get();
        let removed = match self.graph.preview_recall(target, mode) {
            Ok(removed) => removed,
            Err(Error::AlreadyRecalled { .. }) if removal == Removal::Erase => {
                self.confirm_graph_before_destroying()?;
                // The record is the durable intent: if the erasure below is cut short by a
                // crash, the next open finishes it.
                self.append(&[Entry::Recall { id: target, mode, removal }])?;
                let mut doomed = self.graph.dead_descendants(target)?;
                doomed.push(target);
                self.graph.request_erase(doomed);
                self.erase_requested_content()?;
                return Ok(Vec::new());
            }
            Err(error) => return Err(error),
        };
        if removal == Removal::Erase {
            // What dies was computed from the graph; once it is found to match the log, so does
            // what is about to be erased.
            self.confirm_graph_before_destroying()?;
        }
        self.append(&[Entry::Recall { id: target, mode, removal }])?;
        self.graph.kill(target, &removed);
        if removal == Removal::Erase {
            self.graph.request_erase(removed.iter().copied().chain([target]));
            self.erase_requested_content()?;
        }
        Ok(removed.into_iter().map(Id::from).collect())
    }

    /// Redacts, in place, every record covered by an Erase that still keeps its text.
    fn erase_requested_content(&mut self) -> Result<(), Error> {
        let result = self.erase_in_place();
        if result.is_err() {
            // The recall is durable but its erasure is not finished: refuse further writes so
            // the caller reopens, and the open completes the erasure.
            self.poisoned = true;
        }
        result.map(|_| ()).map_err(|error| match error {
            // The recall record is on disk and some overwrites may be too: the caller must know
            // the recall happened and that its text goes at the next open.
            Error::Io { operation, path, message } => Error::OutcomeUnknown { operation, path, message },
            other => other,
        })
    }
}
