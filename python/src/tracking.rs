//! Read tracking of a local agent handle, as a memory server keeps it for each session: the
//! ids read through `get` and the searches since the handle's previous memory become parents
//! of its next one. (Through a server, the server tracks; this is only for a `Store`'s agents.)

use std::sync::{Mutex, MutexGuard, PoisonError};

use cheesedb::{Hit, Id, Node, ReadSet};

/// One handle's reads: `None` while tracking is off (the default).
#[derive(Default)]
pub(crate) struct Tracking {
    reads: Mutex<Option<ReadSet>>,
}

impl Tracking {
    /// The reads; only ever replaced or changed by one call of the set, never left half-done.
    fn reads(&self) -> MutexGuard<'_, Option<ReadSet>> {
        self.reads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns tracking on or off; off forgets what was read.
    pub(crate) fn set(&self, on: bool) {
        let mut reads = self.reads();
        match (on, reads.is_some()) {
            (true, false) => *reads = Some(ReadSet::new()),
            (false, _) => *reads = None,
            (true, true) => {}
        }
    }

    /// Notes a node `get` returned.
    pub(crate) fn note_node(&self, node: &Node) {
        if let Some(reads) = &mut *self.reads() {
            reads.note_node(node);
        }
    }

    /// Notes the hits of a search.
    pub(crate) fn note_hits(&self, hits: &[Hit]) {
        if let Some(reads) = &mut *self.reads() {
            hits.iter().for_each(|hit| reads.note(hit.id));
        }
    }

    /// Notes the ids a search page found.
    pub(crate) fn note_ids(&self, ids: impl IntoIterator<Item = Id>) {
        if let Some(reads) = &mut *self.reads() {
            ids.into_iter().for_each(|id| reads.note(id));
        }
    }

    /// A copy of what was read, when tracking is on, for one write.
    pub(crate) fn snapshot(&self) -> Option<ReadSet> {
        self.reads().clone()
    }

    /// Forgets the reads a memory was written with (`written`); reads noted since stay.
    pub(crate) fn forget(&self, written: &ReadSet) {
        if let Some(reads) = &mut *self.reads() {
            let kept: Vec<Id> =
                reads.ids().iter().copied().filter(|id| written.ids().binary_search(id).is_err()).collect();
            reads.clear();
            kept.into_iter().for_each(|id| reads.note(id));
        }
    }
}
