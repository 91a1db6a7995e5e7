//! A session's reads, as a client of the memory server keeps them: every id the workload read
//! through `get` or `search` since its last tracked write, held twice, in the engine's
//! `ReadSet` and in the model's plain set, which must agree whenever a write uses them.
//!
//! A write with reads takes them, whatever its outcome: a success clears them as a session
//! would, and after a refusal the harness starts again rather than repeat it. The reads outlive
//! a reopen of the agent, so ids read before a crash are checked against what the reopened
//! agent holds (recalled since: `DeadParent`).

use std::collections::BTreeSet;

use cheesedb_core::{Id, ReadSet};

use super::stop::Stop;
use crate::model::note_read;

/// The ids read since the last tracked write.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    reads: ReadSet,
    model_reads: BTreeSet<u64>,
}

impl Session {
    /// Notes that `id` was read.
    pub(crate) fn note(&mut self, id: u64) {
        self.reads.note(Id::from(id));
        note_read(&mut self.model_reads, id);
    }

    /// Takes the reads for a write, leaving the session empty: the engine's set and the
    /// model's ids, after checking that the two agree.
    pub(crate) fn take(&mut self) -> Result<(ReadSet, Vec<u64>), Stop> {
        let Session { reads, model_reads } = core::mem::take(self);
        let engine_ids: Vec<u64> = reads.ids().iter().map(|id| id.get()).collect();
        let model_ids: Vec<u64> = model_reads.into_iter().collect();
        if engine_ids != model_ids {
            return Err(Stop::Violation(format!("the read set holds {engine_ids:?}, the model's {model_ids:?}")));
        }
        Ok((reads, model_ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_and_the_model_keep_the_same_ids_past_the_limit() {
        let mut session = Session::default();
        for id in (1..=100).rev().chain(1..=100) {
            session.note(id);
        }
        let (reads, ids) = session.take().unwrap_or_else(|_| panic!("the two sets differ"));
        assert_eq!(ids.len(), crate::model::READ_SET_MAX_IDS);
        assert_eq!(reads.len(), ids.len());
        assert!(session.take().is_ok_and(|(reads, ids)| reads.is_empty() && ids.is_empty()));
    }
}
