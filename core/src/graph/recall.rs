//! The two recall walks. Both touch only what descends from the recalled node, so their cost
//! follows what they remove, not the size of the agent.

use alloc::vec::Vec;
use hashbrown::HashMap;

use super::legs::{ends_leg, parent_of};
use super::node_set::NodeSet;
use super::{Graph, FLAG_ALIVE, FLAG_CONTENT_ON_DISK, FLAG_ERASE, FLAG_PARENT_DEAD, FLAG_VECTOR_ON_DISK};
use crate::convert::node_index_u32;
use crate::error::Error;
use crate::id::{Id, Mode, Removal};

/// What one recall does to the graph: the memories that die with the recalled id, and the
/// nodes whose text an Erase covers. Planned before the recall record is written, applied after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallPlan {
    /// The recalled ids: one for a recall, a member's references for a space's recall.
    pub recalled: Vec<u64>,
    /// The memories that die with them (not the recalled ids), ascending.
    pub removed: Vec<u64>,
    /// The nodes an Erase covers, ascending; empty for an Untrusted recall.
    pub erase: Vec<u64>,
    /// Whether every recalled id was recalled before.
    pub repeated: bool,
}

impl RecallPlan {
    /// Refuses, with `AlreadyRecalled`, this plan if it recalls an id recalled before and would
    /// change nothing: no memory dies and it erases nothing. An Erase of an id recalled before
    /// is refused too once every node it covers was erased already (nothing of them is left in
    /// the files); while any text or key of them is left, it makes sure that goes.
    pub fn refuse_if_idle(&self) -> Result<(), Error> {
        match self.recalled.first() {
            Some(first) if self.is_idle() => Err(Error::AlreadyRecalled { id: Id::from(*first) }),
            _ => Ok(()),
        }
    }

    /// Whether the plan changes nothing: its ids were recalled before, no memory dies and
    /// nothing is left to erase.
    #[must_use]
    pub fn is_idle(&self) -> bool {
        self.repeated && self.removed.is_empty() && self.erase.is_empty()
    }
}

impl Graph {
    /// The ids a recall of `id` would remove (not `id` itself), ascending, as an Untrusted
    /// recall would do it (so refused with `AlreadyRecalled` when it would change nothing).
    /// Changes nothing.
    pub fn preview_recall(&self, id: u64, mode: Mode) -> Result<Vec<u64>, Error> {
        let plan = self.plan_recall(id, mode, Removal::Untrusted)?;
        plan.refuse_if_idle()?;
        Ok(plan.removed)
    }

    /// What a recall of `id` with `mode` and `removal` does. A recall of an id recalled before
    /// applies its own mode and removal to what is there now: a Strict recall after a Fair one
    /// removes what Strict reaches, an Erase after an Untrusted one erases the id and every
    /// recalled memory with it in its history. Changes nothing.
    pub fn plan_recall(&self, id: u64, mode: Mode, removal: Removal) -> Result<RecallPlan, Error> {
        self.plan_recall_of_all(&[id], mode, removal)
    }

    /// What recalling every id of `ids` at once does: as [`Graph::plan_recall`], with a memory
    /// dying in a Fair recall once each of its legs has a parent among the ids or what dies
    /// with them. Recalled one after the other, the ids would come to the same end. Changes
    /// nothing.
    pub fn plan_recall_of_all(&self, ids: &[u64], mode: Mode, removal: Removal) -> Result<RecallPlan, Error> {
        let mut targets = Vec::with_capacity(ids.len());
        let mut repeated = true;
        for id in ids {
            repeated &= super::unpack_flags(self.slot(*id)?) & FLAG_ALIVE == 0;
            targets.push(node_index_u32(*id)?);
        }
        let mut removed = match mode {
            Mode::Fair => self.fair_closure(&targets),
            Mode::Strict if mutant!(StrictLikeFair) => self.fair_closure(&targets),
            Mode::Strict => self.descendants(&targets, |flags| flags & FLAG_ALIVE != 0),
        };
        removed.sort_unstable();
        removed.dedup();
        if mode == Mode::Strict {
            // The Fair closure never holds a target; the descendants may (a target below another).
            let mut sorted_targets = targets.clone();
            sorted_targets.sort_unstable();
            removed.retain(|index| sorted_targets.binary_search(index).is_err());
        }
        let erase = match removal {
            Removal::Untrusted => Vec::new(),
            Removal::Erase => self.erase_cover(&targets, &removed),
        };
        let removed = removed.into_iter().map(|index| u64::from(index) + 1).collect();
        Ok(RecallPlan { recalled: ids.to_vec(), removed, erase, repeated })
    }

    /// The nodes an Erase of `targets` covers, as ids, ascending: the targets, what dies with
    /// them (`removed`), and for a target recalled before, every recalled memory with it in
    /// its history (whatever recall killed it). A node an earlier Erase covered and finished
    /// has nothing left for this one: counted, it would make a repeated Erase that changes
    /// nothing look like work.
    fn erase_cover(&self, targets: &[u32], removed: &[u32]) -> Vec<u64> {
        let recalled_before: Vec<u32> =
            targets.iter().copied().filter(|target| self.flags_of_index(*target) & FLAG_ALIVE == 0).collect();
        let mut erase = self.descendants(&recalled_before, |flags| flags & FLAG_ALIVE == 0);
        erase.extend_from_slice(removed);
        erase.extend_from_slice(targets);
        erase.sort_unstable();
        erase.dedup();
        erase.retain(|index| self.has_anything_to_erase(*index));
        erase.into_iter().map(|index| u64::from(index) + 1).collect()
    }

    /// Every memory with one of `ids` anywhere in its history, alive or recalled, ascending.
    /// Unknown ids have none.
    #[must_use]
    pub fn descendants_of_all(&self, ids: &[u64]) -> Vec<u64> {
        let targets: Vec<u32> = ids.iter().filter_map(|id| node_index_u32(*id).ok()).collect();
        let mut found = self.descendants(&targets, |_| true);
        found.sort_unstable();
        found.into_iter().map(|index| u64::from(index) + 1).collect()
    }

    /// Applies a plan made by [`Graph::plan_recall`] on this graph as it is now.
    pub fn apply_recall(&mut self, plan: &RecallPlan) {
        for dead in plan.recalled.iter().chain(&plan.removed) {
            self.kill_one(*dead);
        }
        self.request_erase(plan.erase.iter().copied());
    }

    /// Whether an Erase covering node `index` would still change something: it is not covered
    /// by an Erase yet, or its content or a vector record of it is still in the files.
    fn has_anything_to_erase(&self, index: u32) -> bool {
        let flags = self.flags_of_index(index);
        flags & FLAG_ERASE == 0 || flags & (FLAG_CONTENT_ON_DISK | FLAG_VECTOR_ON_DISK) != 0
    }

    /// Memories none of whose legs holds once `target` dies, repeated to a fixpoint. Only the
    /// children of a node that dies can lose a leg, so the walk follows child edges: every node
    /// that dies visits each of its alive children once and marks the legs it breaks there. A
    /// child's parents are looked up only on its first visit, and only if one of them died
    /// before this recall; it dies when every one of its legs is marked. Marks only grow, so the order of
    /// visits does not change the result.
    ///
    /// The walk goes in waves: every edge out of the nodes that died in the last wave, looked
    /// at pass by pass (alive? where are its legs? which legs?). Within a pass the lookups do
    /// not wait on each other, so the memory system serves many at once; visited one by one,
    /// each would wait for the one before.
    fn fair_closure(&self, targets: &[u32]) -> Vec<u32> {
        let mut dead = NodeSet::new(targets.iter().min().copied().unwrap_or(0), self.slots.len());
        for target in targets {
            dead.insert(*target);
        }
        let mut broken_legs: HashMap<u32, u64> = HashMap::new();
        let mut removed = Vec::new();
        let mut dying = targets.to_vec();
        let mut visits: Vec<(u32, u32)> = Vec::new();
        let mut every_legs: Vec<u64> = Vec::new();
        while !dying.is_empty() {
            visits.clear();
            for parent in dying.drain(..) {
                self.children.for_each(parent, |child| visits.push((child, parent)));
            }
            visits.retain(|(child, _)| !dead.contains(*child) && self.flags_of_index(*child) & FLAG_ALIVE != 0);
            // Sized once a wave: growing it visit by visit rehashed it (a twentieth of a walk).
            broken_legs.reserve(visits.len());
            every_legs.clear();
            every_legs.extend(visits.iter().map(|(child, _)| every_leg(self.words_of(*child))));
            for (&(child, parent), &every) in visits.iter().zip(&every_legs) {
                if every == 0 || dead.contains(child) {
                    continue; // a lot has no legs to lose; a child may have died earlier in this wave
                }
                if every == 1 {
                    // Its one leg holds this dead parent, so it is broken: no need to count.
                    dead.insert(child);
                    removed.push(child);
                    dying.push(child);
                    continue;
                }
                let words = self.words_of(child);
                let broken = broken_legs.entry(child).or_insert_with(|| {
                    let parent_dead = self.flags_of_index(child) & FLAG_PARENT_DEAD != 0;
                    if parent_dead {
                        self.legs_broken_before(words)
                    } else {
                        0
                    }
                });
                *broken |= legs_holding(words, parent);
                if *broken == every {
                    dead.insert(child);
                    removed.push(child);
                    dying.push(child);
                }
            }
        }
        in_ascending_order(removed, dead, targets)
    }

    /// The legs (one bit each) with a parent that was dead before this recall began.
    fn legs_broken_before(&self, words: &[u32]) -> u64 {
        legs_where(words, |parent| self.flags_of_index(parent) & FLAG_ALIVE == 0)
    }

    /// Every memory with one of `targets` anywhere in its history (through dead nodes too)
    /// whose flags pass `keep`, ascending.
    fn descendants(&self, targets: &[u32], keep: impl Fn(u8) -> bool) -> Vec<u32> {
        let mut seen = NodeSet::new(targets.iter().min().copied().unwrap_or(0), self.slots.len());
        let mut queue = targets.to_vec();
        let mut found = Vec::new();
        while let Some(node) = queue.pop() {
            self.children.for_each(node, |child| {
                if seen.insert(child) {
                    if keep(self.flags_of_index(child)) {
                        found.push(child);
                    }
                    queue.push(child);
                }
            });
        }
        in_ascending_order(found, seen, &[])
    }
}

/// `members`, distinct, in ascending order, where `set` holds every member, none of `left_out`
/// being one: read from the set's bits (less `left_out`) when they lie close together, which
/// costs a word per 64 indexes of their span, and sorted otherwise, or when the set holds more
/// than the members there (measured: sorting was a fifth of a dry run over 10,000 memories).
fn in_ascending_order(mut members: Vec<u32>, mut set: NodeSet, left_out: &[u32]) -> Vec<u32> {
    let (Some(low), Some(high)) = (members.iter().min().copied(), members.iter().max().copied()) else {
        return members;
    };
    let span_words = (high / 64 - low / 64) as usize + 1;
    if span_words <= members.len().saturating_mul(4) {
        for index in left_out {
            set.remove(*index);
        }
        let read: Vec<u32> = set.ascending(low, high).collect();
        // The set holds every member, so as many in the span are the members themselves.
        if read.len() == members.len() {
            return read;
        }
    }
    members.sort_unstable();
    members
}

// A memory's legs fit the bits of one word.
const _: () = assert!(crate::limits::LEGS_PER_MEMORY_MAX <= 64);

/// Bit `leg_index` when `set`. Legs past the 64th, which no checked memory has, get no bit.
fn leg_bit(leg_index: usize, set: bool) -> u64 {
    if set {
        u32::try_from(leg_index).ok().and_then(|shift| 1u64.checked_shl(shift)).unwrap_or(0)
    } else {
        0
    }
}

/// The legs (one bit each) that have `parent` among their parents.
fn legs_holding(words: &[u32], parent: u32) -> u64 {
    legs_where(words, |word_parent| word_parent == parent)
}

/// The legs (one bit each) with a parent that passes `test`. One pass over the words, counting
/// legs by their end marks: it runs for every visit of a child with several legs.
fn legs_where(words: &[u32], test: impl Fn(u32) -> bool) -> u64 {
    let mut legs = 0;
    let mut leg_index = 0;
    for word in words {
        legs |= leg_bit(leg_index, test(parent_of(*word)));
        leg_index += usize::from(ends_leg(*word));
    }
    legs
}

/// Every leg of a memory, one bit each. Counted from the words' end marks rather than by
/// splitting, since a Fair closure asks it of every child it visits (measured: a sixth of a
/// dry run over 10,000 memories).
fn every_leg(words: &[u32]) -> u64 {
    let marked = words.iter().filter(|word| ends_leg(**word)).count();
    // A last word without its mark still ends a leg, as splitting the words counts it.
    let legs = marked + usize::from(words.last().is_some_and(|word| !ends_leg(*word)));
    u32::try_from(legs).ok().and_then(|legs| 1u64.checked_shl(legs)).map_or(u64::MAX, |bit| bit - 1)
}

#[cfg(test)]
mod tests {
    use super::super::legs::split_legs;
    use super::super::Location;
    use super::*;
    use alloc::vec;

    #[test]
    fn a_leg_broken_by_an_earlier_recall_stays_broken() {
        let here = Location { segment: 1, offset: 0 };
        let mut graph = Graph::default();
        let (a, b) = (graph.add_lot(here, true).unwrap(), graph.add_lot(here, true).unwrap());
        let either = graph.add_memory(vec![vec![a], vec![b]], here, true).unwrap();
        let built_on_it = graph.add_memory(vec![vec![either, b]], here, true).unwrap();
        assert_eq!(graph.preview_recall(b, Mode::Fair), Ok(vec![built_on_it]));
        graph.kill(b, &[built_on_it]);
        assert_eq!(graph.preview_recall(a, Mode::Fair), Ok(vec![either]));
    }

    #[test]
    fn recalling_ids_at_once_ends_where_recalling_them_one_after_the_other_does() {
        let here = Location { segment: 1, offset: 0 };
        let mut graph = Graph::default();
        let (a, b, c) = (
            graph.add_lot(here, true).unwrap(),
            graph.add_lot(here, true).unwrap(),
            graph.add_lot(here, true).unwrap(),
        );
        let either = graph.add_memory(vec![vec![a], vec![b]], here, true).unwrap();
        let on_either = graph.add_memory(vec![vec![either], vec![c]], here, true).unwrap();
        let on_a = graph.add_memory(vec![vec![a, c]], here, true).unwrap();
        let fair = graph.plan_recall_of_all(&[a, b], Mode::Fair, Removal::Erase).unwrap();
        assert_eq!(fair.removed, vec![either, on_a], "on_either keeps its leg through c");
        assert_eq!(fair.erase, vec![a, b, either, on_a]);
        let strict = graph.plan_recall_of_all(&[a, b], Mode::Strict, Removal::Untrusted).unwrap();
        assert_eq!(strict.removed, vec![either, on_either, on_a]);
        let mut one_by_one = graph.clone();
        for id in [a, b] {
            let plan = one_by_one.plan_recall(id, Mode::Fair, Removal::Erase).unwrap();
            one_by_one.apply_recall(&plan);
        }
        graph.apply_recall(&fair);
        assert!(graph.same_as(&one_by_one));
        let again = graph.plan_recall_of_all(&[a, b], Mode::Fair, Removal::Untrusted).unwrap();
        assert!(again.is_idle());
        assert_eq!(again.refuse_if_idle(), Err(Error::AlreadyRecalled { id: Id::from(a) }));
        assert_eq!(graph.descendants_of_all(&[b]), vec![either, on_either]);
    }

    #[test]
    fn a_long_chain_is_removed_whole_after_the_row_is_rebuilt() {
        let here = Location { segment: 1, offset: 0 };
        let mut graph = Graph::default();
        let lot = graph.add_lot(here, true).unwrap();
        let mut previous = lot;
        for _ in 0..10_000 {
            previous = graph.add_memory(vec![vec![previous]], here, true).unwrap();
        }
        graph.settle();
        let removed = graph.preview_recall(lot, Mode::Fair).unwrap();
        assert_eq!(removed.len(), 10_000);
        assert_eq!(removed, (2..=10_001).collect::<Vec<u64>>());
    }

    #[test]
    fn leg_bits_are_those_that_splitting_the_words_finds() {
        let by_splitting = |words: &[u32]| {
            split_legs(words).enumerate().fold(0u64, |legs, (leg_index, _)| legs | leg_bit(leg_index, true))
        };
        let holding_by_splitting = |words: &[u32], parent: u32| {
            split_legs(words).enumerate().fold(0u64, |legs, (leg_index, leg)| {
                legs | leg_bit(leg_index, leg.iter().any(|word| parent_of(*word) == parent))
            })
        };
        let mark = |index: u32| index | (1 << 30);
        let mut cases: Vec<Vec<u32>> = vec![vec![], vec![mark(3)], vec![1, mark(2), mark(3)], vec![mark(1), 2]];
        cases.push((0..64).map(mark).collect());
        cases.push((0..70).map(mark).collect());
        for words in cases {
            assert_eq!(every_leg(&words), by_splitting(&words), "{words:?}");
            for parent in 0..4 {
                assert_eq!(legs_holding(&words, parent), holding_by_splitting(&words, parent), "{words:?} {parent}");
            }
        }
    }

    #[test]
    fn what_a_fair_recall_removes_is_ascending_whether_close_together_or_scattered() {
        let here = Location { segment: 1, offset: 0 };
        let mut graph = Graph::default();
        let lot = graph.add_lot(here, true).unwrap();
        let other = graph.add_lot(here, true).unwrap();
        // Scattered: memories on the lot far apart, with many unrelated ones between them.
        let mut expected = Vec::new();
        for round in 0..50u64 {
            let parent = expected.last().copied().filter(|_| round % 2 == 1).unwrap_or(lot);
            expected.push(graph.add_memory(vec![vec![parent]], here, true).unwrap());
            for _ in 0..500 {
                graph.add_memory(vec![vec![other]], here, true).unwrap();
            }
        }
        // Close together: a run of memories, each on the lot or on one written just before.
        for index in 0..200 {
            let parent = if index % 3 == 0 { lot } else { *expected.last().unwrap() };
            expected.push(graph.add_memory(vec![vec![parent], vec![lot, parent]], here, true).unwrap());
        }
        graph.settle();
        assert_eq!(graph.preview_recall(lot, Mode::Fair).unwrap(), expected);
        let targets = [node_index_u32(lot).unwrap()];
        let dense: Vec<u32> = expected[50..].iter().rev().map(|id| node_index_u32(*id).unwrap()).collect();
        let mut set = NodeSet::new(0, graph.slots.len());
        dense.iter().chain(&targets).for_each(|index| {
            set.insert(*index);
        });
        let mut sorted = dense.clone();
        sorted.sort_unstable();
        assert_eq!(in_ascending_order(dense, set, &targets), sorted);
    }
}
