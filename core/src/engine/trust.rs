//! Trust levels computed by the engine: a lot has its label's level; a memory has the best, over
//! the legs that hold it, of the worst level among that leg's parents.

use alloc::vec;
use alloc::vec::Vec;

use alloc::sync::Arc;
use hashbrown::{HashMap, HashSet};

use super::AgentEngine;
use crate::error::Error;
use crate::error_facts::InternalRule;
use crate::graph::{Graph, Kind};
use crate::id::Id;
use crate::node::NodeKind;
use crate::storage::Storage;
use crate::trust::{TrustLevel, TrustRules};

/// The labels of the lots whose trust was asked for, read once from disk and kept: a lot's
/// label never changes, except that an Erase on an encrypted agent takes it with the content
/// (its lots then have no label, as after a reopen).
#[derive(Debug, Default)]
pub(super) struct LotLabels {
    /// Each distinct label once: agents use few labels for many lots.
    distinct: HashSet<Arc<str>>,
    of_lot: HashMap<u64, Arc<str>>,
}

impl LotLabels {
    fn get(&self, lot: u64) -> Option<Arc<str>> {
        self.of_lot.get(&lot).cloned()
    }

    fn insert(&mut self, lot: u64, label: &str) -> Arc<str> {
        let shared = match self.distinct.get(label) {
            Some(known) => known.clone(),
            None => {
                let new: Arc<str> = Arc::from(label);
                self.distinct.insert(new.clone());
                new
            }
        };
        self.of_lot.insert(lot, shared.clone());
        shared
    }

    /// Forgets the label of `lot`: an Erase destroyed it.
    pub(super) fn forget(&mut self, lot: u64) {
        self.of_lot.remove(&lot);
    }
}

/// What the computation needs to know of one node.
enum TrustInput {
    /// A lot, at its label's level.
    Lot(TrustLevel),
    /// A memory, with the legs that count for it.
    Memory(Vec<Vec<u64>>),
}

/// The legs that decide a memory's trust: for an alive memory those whose parents are all
/// alive (a Fair recall may have left it standing on fewer legs), for a recalled one all of
/// them (it is judged as it was when it was written).
fn counting_legs(graph: &Graph, id: u64) -> Result<Vec<Vec<u64>>, Error> {
    let legs = graph.legs(id)?;
    if !graph.is_alive(id) {
        return Ok(legs);
    }
    let holding: Vec<Vec<u64>> =
        legs.iter().filter(|leg| leg.iter().all(|parent| graph.is_alive(*parent))).cloned().collect();
    // An alive memory always has a leg that holds; should one not, its legs as written decide.
    Ok(if holding.is_empty() { legs } else { holding })
}

/// The trust levels worked out so far, by node: valid while the graph and the rules stay as they
/// were (within one call holding the engine).
pub(crate) type KnownLevels = HashMap<u64, TrustLevel>;

/// The trust level of `id`, with an explicit stack and a memo rather than recursion, so that a
/// deep chain of memories costs heap, not call stack. `describe` tells what a node is; `known`
/// holds the levels worked out before, and gains those worked out now.
fn compute(
    id: u64,
    known: &mut KnownLevels,
    mut describe: impl FnMut(u64) -> Result<TrustInput, Error>,
) -> Result<TrustLevel, Error> {
    let mut stack = vec![id];
    while let Some(&top) = stack.last() {
        if known.contains_key(&top) {
            stack.pop();
            continue;
        }
        let level = match describe(top)? {
            TrustInput::Lot(level) => level,
            TrustInput::Memory(legs) => {
                let waiting = stack.len();
                for parent in legs.iter().flatten() {
                    // Parents are always older than their children, so the walk ends; a graph
                    // saying otherwise would make it loop.
                    if *parent >= top {
                        return Err(Error::Internal { what: InternalRule::ParentsOlderThanMemory });
                    }
                    if !known.contains_key(parent) {
                        stack.push(*parent);
                    }
                }
                if stack.len() > waiting {
                    continue;
                }
                let worst_of_leg = |leg: &Vec<u64>| leg.iter().filter_map(|parent| known.get(parent).copied()).min();
                legs.iter().filter_map(worst_of_leg).max().unwrap_or(TrustLevel::Low)
            }
        };
        known.insert(top, level);
        stack.pop();
    }
    known.get(&id).copied().ok_or(Error::Internal { what: InternalRule::TrustWalkKnowsItsStart })
}

impl<S: Storage> AgentEngine<S> {
    /// How far the lot or memory `id` is to be believed under `rules`. A lot has the level of its
    /// label. A memory has the best, over its legs, of the worst level among that leg's parents:
    /// one way of learning it from trusted sources is enough, but a way that passes through a
    /// distrusted one is only as good as that source. For an alive memory only the legs whose
    /// parents are all alive count; a recalled memory (and a recalled lot) keeps the level
    /// computed over all its legs, as it was written.
    ///
    /// Lot labels are read from disk the first time a lot's level is needed, then kept in RAM.
    ///
    /// # Errors
    ///
    /// - `Error::UnknownId` when no lot or memory has `id`; `Error::AgentDeleted` once the agent
    ///   is deleted.
    /// - `Error::Corrupt` or `Error::Io` when the record of a lot it rests on cannot be read.
    pub fn trust(&mut self, id: Id, rules: &TrustRules) -> Result<TrustLevel, Error> {
        self.check_readable()?;
        self.trust_knowing(id, rules, &mut KnownLevels::new())
    }

    /// [`AgentEngine::trust`] of a readable agent, starting from the levels in `known` and
    /// adding to it those worked out, so that judging many nodes in one call walks each parent
    /// they share once.
    pub(crate) fn trust_knowing(
        &mut self,
        id: Id,
        rules: &TrustRules,
        known: &mut KnownLevels,
    ) -> Result<TrustLevel, Error> {
        self.graph.kind(id.get())?;
        compute(id.get(), known, |node| match self.graph.kind(node)? {
            Kind::Lot => Ok(TrustInput::Lot(rules.level_of(&self.lot_label(node)?))),
            Kind::Memory => Ok(TrustInput::Memory(counting_legs(&self.graph, node)?)),
            // The rules name lot labels of this agent; a space's node has none here, so it
            // stands at the level of a label no rule names.
            Kind::Shared => Ok(TrustInput::Lot(TrustLevel::default())),
        })
    }

    /// The label of lot `lot`, from the cache or else from its record.
    fn lot_label(&mut self, lot: u64) -> Result<Arc<str>, Error> {
        if let Some(label) = self.lot_labels.get(lot) {
            return Ok(label);
        }
        let NodeKind::Lot { label } = self.audit(Id::from(lot))?.kind else {
            return Err(Error::Internal { what: InternalRule::LotRecordIsLot });
        };
        Ok(self.lot_labels.insert(lot, &label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Location;

    const HERE: Location = Location { segment: 1, offset: 0 };

    /// Lots 1 (high), 2 (low), 3 (normal); memories 4 = {1} or {2}; 5 = {2, 3}; 6 = {4, 5}.
    fn example() -> (Graph, Vec<TrustLevel>) {
        let mut graph = Graph::default();
        for _ in 0..3 {
            graph.add_lot(HERE, true).unwrap();
        }
        graph.add_memory(vec![vec![1], vec![2]], HERE, true).unwrap();
        graph.add_memory(vec![vec![2, 3]], HERE, true).unwrap();
        graph.add_memory(vec![vec![4, 5]], HERE, true).unwrap();
        (graph, vec![TrustLevel::High, TrustLevel::Low, TrustLevel::Normal])
    }

    fn trust_in(graph: &Graph, lots: &[TrustLevel], id: u64) -> Result<TrustLevel, Error> {
        compute(id, &mut KnownLevels::new(), |node| match graph.kind(node)? {
            Kind::Lot => {
                let index = usize::try_from(node - 1).unwrap();
                lots.get(index).copied().map(TrustInput::Lot).ok_or(Error::UnknownId { id: Id::from(node) })
            }
            Kind::Memory => Ok(TrustInput::Memory(counting_legs(graph, node)?)),
            Kind::Shared => Ok(TrustInput::Lot(TrustLevel::default())),
        })
    }

    #[test]
    fn best_leg_of_worst_parents() {
        let (graph, lots) = example();
        let levels: Vec<_> = (1..=6).map(|id| trust_in(&graph, &lots, id).unwrap()).collect();
        use TrustLevel::{High, Low, Normal};
        assert_eq!(levels, [High, Low, Normal, High, Low, Low]);
    }

    #[test]
    fn a_fair_recall_leaves_only_the_legs_that_still_hold() {
        let (mut graph, lots) = example();
        graph.kill(1, &[]);
        assert!(graph.is_alive(4), "memory 4 still stands on lot 2");
        assert_eq!(trust_in(&graph, &lots, 4), Ok(TrustLevel::Low));
        // A recalled memory is judged over all its legs.
        graph.kill(4, &[6]);
        assert_eq!(trust_in(&graph, &lots, 4), Ok(TrustLevel::High));
        assert_eq!(trust_in(&graph, &lots, 6), Ok(TrustLevel::Low));
    }

    #[test]
    fn a_long_chain_needs_no_deep_call_stack() {
        let mut graph = Graph::default();
        graph.add_lot(HERE, true).unwrap();
        for id in 1..200_000u64 {
            graph.add_memory(vec![vec![id]], HERE, true).unwrap();
        }
        assert_eq!(trust_in(&graph, &[TrustLevel::High], 200_000), Ok(TrustLevel::High));
    }

    #[test]
    fn an_unknown_id_is_refused() {
        let (graph, lots) = example();
        assert_eq!(trust_in(&graph, &lots, 7), Err(Error::UnknownId { id: Id::from(7) }));
    }

    #[test]
    fn labels_are_held_once_each() {
        let mut labels = LotLabels::default();
        labels.insert(1, "web");
        labels.insert(2, "web");
        labels.insert(3, "user");
        let found = [1, 2, 3, 4].map(|lot| labels.get(lot));
        assert_eq!(found.each_ref().map(Option::as_deref), [Some("web"), Some("web"), Some("user"), None]);
        assert_eq!(labels.distinct.len(), 2);
    }
}
