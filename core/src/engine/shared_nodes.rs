//! Shared nodes: the nodes of an agent that stand for lots and memories of a space, so that its
//! own memories can name them as parents. A space's recall reaches the agent through them: each
//! one whose node the space recalled is recalled in the agent too, with the same mode and
//! removal, and what the agent built on it goes as it would inside one log.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use super::append::Entry;
use super::space_ledger::RecalledNodes;
use super::AgentEngine;
use crate::codec::snapshot_file::SnapshotShared;
use crate::corrupt_reason::CorruptReason;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::graph::{Graph, Kind};
use crate::id::{Id, Mode, Removal};
use crate::limits::BATCH_MAX_RECORDS;
use crate::storage::Storage;

/// Which shared node stands for which node of which space. (What one shared node stands for
/// is in its record, which `get` reads.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SharedNodes {
    /// `(space, node in the space, shared node)`, so one space's are one range.
    by_space: BTreeSet<(u64, u64, u64)>,
    /// The same, as `(node in the space, shared node)` pairs of each space in the order of the
    /// shared nodes: a space's recall walks all of them, which a vector does several times
    /// faster than a tree (measured: the walk was a quarter of a member's part of a recall).
    in_order: BTreeMap<u64, Vec<(u64, u64)>>,
}

impl SharedNodes {
    /// Notes that shared node `id` stands for node `space_id` of space `space` (the log notes
    /// its shared nodes in the order of their ids, which the order of a space's pairs keeps).
    pub(crate) fn note(&mut self, space: u64, space_id: u64, id: u64) {
        if self.by_space.insert((space, space_id, id)) {
            self.in_order.entry(space).or_default().push((space_id, id));
        }
    }

    /// The spaces the shared nodes stand in, ascending, each once.
    pub(crate) fn spaces(&self) -> Vec<u64> {
        self.in_order.keys().copied().collect()
    }

    /// The shared nodes written for node `space_id` of space `space` (a recalled one is
    /// replaced by a new one when the node is shared again).
    fn standing_for(&self, space: u64, space_id: u64) -> impl Iterator<Item = u64> + '_ {
        self.by_space.range((space, space_id, 0)..=(space, space_id, u64::MAX)).map(|(_, _, id)| *id)
    }

    /// Every shared node as a snapshot holds it, ascending.
    pub(crate) fn to_snapshot(&self) -> Vec<SnapshotShared> {
        self.by_space
            .iter()
            .map(|(space, space_id, id)| SnapshotShared { space: *space, space_id: *space_id, id: *id })
            .collect()
    }

    /// The shared nodes a snapshot holds, if they are strictly ascending and exactly the
    /// shared nodes of `graph`, its graph.
    pub(crate) fn from_snapshot(entries: &[SnapshotShared], graph: &Graph) -> Result<SharedNodes, CorruptReason> {
        let mismatch = CorruptReason::SnapshotSharedNodesDoNotMatchGraph;
        if entries.windows(2).any(|pair| matches!(pair, [first, second] if first >= second)) {
            return Err(mismatch);
        }
        let mut ids: Vec<u64> = entries.iter().map(|entry| entry.id).collect();
        ids.sort_unstable();
        if !ids.iter().copied().eq(graph.every(Kind::Shared)) {
            return Err(mismatch);
        }
        let by_space = entries.iter().map(|entry| (entry.space, entry.space_id, entry.id)).collect();
        let mut in_order: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
        for entry in entries {
            in_order.entry(entry.space).or_default().push((entry.space_id, entry.id));
        }
        for pairs in in_order.values_mut() {
            pairs.sort_unstable_by_key(|(_, id)| *id);
        }
        Ok(SharedNodes { by_space, in_order })
    }

    /// The `(node in the space, shared node)` pairs of space `space`, in the order of the
    /// shared nodes.
    fn of_space(&self, space: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.in_order.get(&space).into_iter().flatten().copied()
    }
}

impl<S: Storage> AgentEngine<S> {
    /// The shared nodes standing for nodes `space_ids` of space `space`, in their order: those
    /// not yet stood for by an alive one written now, in one durable write (or one per
    /// [`BATCH_MAX_RECORDS`]). The caller has checked that the agent may read the space and
    /// that the nodes are alive there.
    pub(crate) fn shared_nodes(&mut self, space: u64, space_ids: &[u64]) -> Result<Vec<Id>, Error> {
        self.check_writable()?;
        if self.space.is_some() {
            return Err(Error::Internal { what: InternalRule::SharedNodesOnlyInAnAgent });
        }
        // Looked up by node, not over every shared node of the space: a read that tracking
        // counts shares what it shows, so this runs on reads.
        let mut standing: BTreeMap<u64, u64> = BTreeMap::new();
        for space_id in space_ids {
            let alive = self.shared.standing_for(space, *space_id).find(|id| self.graph.is_alive(*id));
            if let Some(id) = alive {
                standing.insert(*space_id, id);
            }
        }
        let mut missing: Vec<u64> =
            space_ids.iter().copied().filter(|space_id| !standing.contains_key(space_id)).collect();
        missing.sort_unstable();
        missing.dedup();
        self.validate_room(missing.len() as u64)?;
        let entries: Vec<Entry<'_>> =
            missing.iter().map(|space_id| Entry::Shared { space, space_id: *space_id }).collect();
        for write in entries.chunks(BATCH_MAX_RECORDS) {
            let written = self.write_entries(write)?;
            for (entry, id) in write.iter().zip(written) {
                if let Entry::Shared { space_id, .. } = entry {
                    standing.insert(*space_id, id.get());
                }
            }
        }
        space_ids
            .iter()
            .map(|space_id| {
                standing
                    .get(space_id)
                    .map(|id| Id::from(*id))
                    .ok_or(Error::Internal { what: InternalRule::WrittenEntryHasId })
            })
            .collect()
    }

    /// The spaces this agent's shared nodes stand in, ascending.
    #[must_use]
    pub fn spaces_shared_from(&self) -> Vec<u64> {
        self.shared.spaces()
    }

    /// What a Fair or Strict recall of the nodes `space_ids` of space `space` would remove
    /// from this agent: the memories built on the shared nodes that stand for them. Writes
    /// nothing.
    pub(crate) fn preview_shared_recall(&self, space: u64, space_ids: &[u64], mode: Mode) -> Result<Vec<Id>, Error> {
        self.check_readable()?;
        let mut wanted = space_ids.to_vec();
        wanted.sort_unstable();
        let ids: Vec<u64> = self
            .shared
            .of_space(space)
            .filter(|(space_id, id)| wanted.binary_search(space_id).is_ok() && self.graph.is_alive(*id))
            .map(|(_, id)| id)
            .collect();
        let plan = self.graph.plan_recall_of_all(&ids, mode, Removal::Untrusted)?;
        Ok(plan.removed.into_iter().map(Id::from).collect())
    }

    /// Applies to this agent every recall of space `space` (whose nodes were recalled as
    /// `recalled` says) that it has not applied yet: each shared node whose node the space
    /// recalled is recalled, with the widest mode and removal the space used on it, in one
    /// durable write. Returns the memories of the agent that died, ascending. Applying it again
    /// changes nothing.
    pub(crate) fn apply_space_recalls(&mut self, space: u64, recalled: &RecalledNodes) -> Result<Vec<Id>, Error> {
        self.check_writable()?;
        if mutant!(MemberSkipsSpaceRecall) {
            return Ok(Vec::new());
        }
        let mut groups: [Vec<u64>; 4] = Default::default();
        for (space_id, id) in self.shared.of_space(space) {
            let Some(mut how) = recalled.how_recalled(space_id) else { continue };
            if mutant!(MemberEraseLeavesText) {
                how.removal = Removal::Untrusted;
            }
            // A Fair and Untrusted recall of a node already dead changes nothing: its closure
            // was taken when it died. Strict, and Erase, may still reach further.
            let may_change = self.graph.is_alive(id) || how.mode == Mode::Strict || how.removal == Removal::Erase;
            let group = GROUPS.iter().position(|(mode, removal)| (*mode, *removal) == (how.mode, how.removal));
            if let (true, Some(group)) = (may_change, group.and_then(|group| groups.get_mut(group))) {
                group.push(id);
            }
        }
        let mut removed = Vec::new();
        for ((mode, removal), ids) in GROUPS.iter().zip(&groups) {
            if !ids.is_empty() {
                removed.extend(self.recall_all(ids, *mode, *removal)?);
            }
        }
        removed.sort_unstable();
        removed.dedup();
        Ok(removed)
    }
}

/// The recalls of one application, in the order they are written: the narrower first, so a
/// wider one finds what the narrower already removed.
const GROUPS: [(Mode, Removal); 4] = [
    (Mode::Fair, Removal::Untrusted),
    (Mode::Strict, Removal::Untrusted),
    (Mode::Fair, Removal::Erase),
    (Mode::Strict, Removal::Erase),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn noted(pairs: &[(u64, u64, u64)]) -> SharedNodes {
        let mut shared = SharedNodes::default();
        for (space, space_id, id) in pairs {
            shared.note(*space, *space_id, *id);
        }
        shared
    }

    #[test]
    fn a_space_walks_its_pairs_in_the_order_of_the_shared_nodes() {
        let shared = noted(&[(2, 9, 4), (1, 3, 5), (2, 1, 6), (2, 9, 7)]);
        assert_eq!(shared.of_space(2).collect::<Vec<_>>(), [(9, 4), (1, 6), (9, 7)]);
        assert_eq!(shared.of_space(1).collect::<Vec<_>>(), [(3, 5)]);
        assert_eq!(shared.of_space(3).count(), 0);
        assert_eq!(shared.spaces(), [1, 2]);
        assert_eq!(shared.standing_for(2, 9).collect::<Vec<_>>(), [4, 7]);
    }

    #[test]
    fn noting_a_pair_twice_keeps_it_once() {
        let shared = noted(&[(1, 3, 5), (1, 3, 5)]);
        assert_eq!(shared.of_space(1).collect::<Vec<_>>(), [(3, 5)]);
    }

    #[test]
    fn a_snapshot_gives_back_what_the_log_noted() {
        use crate::graph::Location;
        let mut graph = Graph::default();
        let here = Location { segment: 1, offset: 0 };
        for _ in 0..3 {
            graph.add_lot(here, true).unwrap();
        }
        for _ in 0..4 {
            graph.add_shared(here).unwrap();
        }
        let shared = noted(&[(2, 9, 4), (1, 3, 5), (2, 1, 6), (2, 9, 7)]);
        let loaded = SharedNodes::from_snapshot(&shared.to_snapshot(), &graph).unwrap();
        assert_eq!(loaded, shared);
        assert_eq!(loaded.of_space(2).collect::<Vec<_>>(), [(9, 4), (1, 6), (9, 7)]);
    }
}
