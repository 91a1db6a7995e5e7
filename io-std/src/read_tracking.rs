//! [`ReadTracking`]: what a session read since its previous memory, kept so that the next memory
//! it remembers rests on it too.

use std::sync::{Mutex, MutexGuard, PoisonError};

use cheesedb_core::{Hit, Id, Node, ReadSet};

/// The read tracking of one session: off, or on with the ids it read since the memory it
/// remembered last. An [`Agent`](crate::Agent) keeps one for each open (its clones share it) and
/// turns it on with [`Agent::track_reads`](crate::Agent::track_reads); a program that opens the
/// agent anew for every call (an MCP server does) keeps one of its own across the opens and
/// writes with [`Agent::remember_tracked`](crate::Agent::remember_tracked).
///
/// Only what a caller was shown counts: an alive node `get` returned and the hits of a search.
/// Listing lots and memories, and `audit`, are not reading. A copy of the reads is taken for a
/// write ([`ReadTracking::reads`]) and exactly that copy is forgotten once the write succeeded
/// ([`ReadTracking::forget`]): a read noted by another thread meanwhile stays for the next one,
/// and a failed write forgets nothing.
///
/// Every method takes `&self` and holds the inner lock only to copy or change the set, so one
/// tracking is shared by the threads of a session.
#[derive(Debug, Default)]
pub struct ReadTracking {
    /// `None` while tracking is off. Only ever changed by one whole call of a method, so a panic
    /// elsewhere cannot leave it half-changed.
    reads: Mutex<Option<ReadSet>>,
}

impl ReadTracking {
    /// A tracking that is on (`true`) or off.
    #[must_use]
    pub fn new(on: bool) -> ReadTracking {
        ReadTracking { reads: Mutex::new(on.then(ReadSet::new)) }
    }

    fn reads_mut(&self) -> MutexGuard<'_, Option<ReadSet>> {
        self.reads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns tracking on or off. Off forgets what was read; on keeps what is being tracked.
    pub fn set(&self, on: bool) {
        let mut reads = self.reads_mut();
        match (on, reads.is_some()) {
            (true, false) => *reads = Some(ReadSet::new()),
            (false, _) => *reads = None,
            (true, true) => {}
        }
    }

    /// Whether tracking is on.
    #[must_use]
    pub fn is_on(&self) -> bool {
        self.reads_mut().is_some()
    }

    /// Notes that `ids` were read (when tracking is on).
    pub fn note(&self, ids: impl IntoIterator<Item = Id>) {
        if let Some(reads) = &mut *self.reads_mut() {
            ids.into_iter().for_each(|id| reads.note(id));
        }
    }

    /// Notes a node `get` returned: an alive one only, since nothing of a recalled node is shown.
    pub fn note_node(&self, node: &Node) {
        if let Some(reads) = &mut *self.reads_mut() {
            reads.note_node(node);
        }
    }

    /// Notes the hits of a search.
    pub fn note_hits(&self, hits: &[Hit]) {
        self.note(hits.iter().map(|hit| hit.id));
    }

    /// A copy of what was read, when tracking is on, for one write.
    #[must_use]
    pub fn reads(&self) -> Option<ReadSet> {
        self.reads_mut().clone()
    }

    /// Forgets the ids of `written`, the copy a memory was just written with; what was read
    /// since stays.
    pub fn forget(&self, written: &ReadSet) {
        self.retain(|id| written.ids().binary_search(&id).is_err());
    }

    /// Forgets `id` alone: a read the caller chose to let go (one recalled since it was read,
    /// say), while the others stay tracked.
    pub fn forget_id(&self, id: Id) {
        self.retain(|read| read != id);
    }

    /// Forgets everything read so far; tracking stays on if it was.
    pub fn clear(&self) {
        if let Some(reads) = &mut *self.reads_mut() {
            reads.clear();
        }
    }

    fn retain(&self, keep: impl Fn(Id) -> bool) {
        if let Some(reads) = &mut *self.reads_mut() {
            let kept: ReadSet = reads.ids().iter().copied().filter(|id| keep(*id)).collect();
            *reads = kept;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(numbers: &[u64]) -> Vec<Id> {
        numbers.iter().copied().map(Id::from).collect()
    }

    fn held(tracking: &ReadTracking) -> Vec<Id> {
        tracking.reads().map(|reads| reads.ids().to_vec()).unwrap_or_default()
    }

    #[test]
    fn off_notes_nothing_and_on_notes_each_id_once() {
        let tracking = ReadTracking::default();
        tracking.note(ids(&[1, 2]));
        assert_eq!(tracking.reads(), None);
        tracking.set(true);
        tracking.note(ids(&[3, 1, 3]));
        assert_eq!(held(&tracking), ids(&[1, 3]));
        tracking.set(true);
        assert_eq!(held(&tracking), ids(&[1, 3]), "turning it on again keeps the reads");
        tracking.set(false);
        tracking.set(true);
        assert_eq!(held(&tracking), ids(&[]), "off forgot them");
    }

    #[test]
    fn a_write_forgets_its_copy_and_keeps_reads_noted_since() {
        let tracking = ReadTracking::new(true);
        tracking.note(ids(&[1, 2]));
        let written = tracking.reads().unwrap();
        tracking.note(ids(&[5]));
        tracking.forget(&written);
        assert_eq!(held(&tracking), ids(&[5]));
        tracking.note(ids(&[6, 7]));
        tracking.forget_id(Id::from(6));
        assert_eq!(held(&tracking), ids(&[5, 7]));
        tracking.clear();
        assert!(tracking.is_on());
        assert_eq!(held(&tracking), ids(&[]));
    }

    #[test]
    fn only_an_alive_node_is_read() {
        let tracking = ReadTracking::new(true);
        let lot = |id: u64, alive: bool| {
            let kind = cheesedb_core::NodeKind::Lot { label: String::from("note") };
            Node::from_parts(Id::from(id), kind, alive, alive.then(|| vec![1]), Vec::new())
        };
        tracking.note_node(&lot(1, true));
        tracking.note_node(&lot(2, false));
        assert_eq!(held(&tracking), ids(&[1]));
    }
}
