//! Read tracking of one session: the ids it read through `get` and the searches since its last
//! memory, which become parents of the next one.

use crate::protocol::WireHit;
use crate::{Id, Node, ReadSet};

/// A session's read tracking: off, or on with what was read.
#[derive(Debug, Default)]
pub struct Tracking {
    reads: Option<ReadSet>,
}

impl Tracking {
    /// Turns tracking on or off; off forgets what was read.
    pub fn set(&mut self, on: bool) {
        match (on, &self.reads) {
            (true, None) => self.reads = Some(ReadSet::new()),
            (false, _) => self.reads = None,
            (true, Some(_)) => {}
        }
    }

    /// Notes a node `get` returned.
    pub fn note_node(&mut self, node: &Node) {
        if let Some(reads) = &mut self.reads {
            reads.note_node(node);
        }
    }

    /// Notes the hits of a search.
    pub fn note_hits(&mut self, hits: &[WireHit]) {
        if let Some(reads) = &mut self.reads {
            hits.iter().for_each(|hit| reads.note(Id::from(hit.id)));
        }
    }

    /// Notes the ids a search page found.
    pub fn note_ids(&mut self, ids: impl IntoIterator<Item = Id>) {
        if let Some(reads) = &mut self.reads {
            ids.into_iter().for_each(|id| reads.note(id));
        }
    }

    /// What was read, when tracking is on.
    pub fn reads(&self) -> Option<&ReadSet> {
        self.reads.as_ref()
    }

    /// Forgets what was read, after a memory was written with it.
    pub fn clear(&mut self) {
        if let Some(reads) = &mut self.reads {
            reads.clear();
        }
    }
}
