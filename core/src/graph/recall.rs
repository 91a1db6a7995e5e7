//! The two recall walks. Both touch only what descends from the recalled node, so their cost
//! follows what they remove, not the size of the agent.

use alloc::vec::Vec;
use hashbrown::HashMap;

use super::legs::{parent_of, split_legs};
use super::node_set::NodeSet;
use super::{Graph, FLAG_ALIVE, FLAG_PARENT_DEAD};
use crate::error::Error;
use crate::id::{Id, Mode};

impl Graph {
    /// The ids a recall of `id` would remove (not `id` itself), ascending. Changes nothing.
    pub fn preview_recall(&self, id: u64, mode: Mode) -> Result<Vec<u64>, Error> {
        let flags = super::unpack_flags(self.slot(id)?);
        if flags & FLAG_ALIVE == 0 {
            return Err(Error::AlreadyRecalled { id: Id::from(id) });
        }
        let target = (id - 1) as u32;
        let mut removed = match mode {
            Mode::Fair => self.fair_closure(target),
            Mode::Strict if mutant!(StrictLikeFair) => self.fair_closure(target),
            Mode::Strict => self.descendants(target, |flags| flags & FLAG_ALIVE != 0),
        };
        removed.sort_unstable();
        Ok(removed.into_iter().map(|index| u64::from(index) + 1).collect())
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
    fn fair_closure(&self, target: u32) -> Vec<u32> {
        let mut dead = NodeSet::new(self.slots.len());
        dead.insert(target);
        let mut broken_legs: HashMap<u32, u64> = HashMap::new();
        let mut removed = Vec::new();
        let mut dying = alloc::vec![target];
        let mut visits: Vec<(u32, u32)> = Vec::new();
        while !dying.is_empty() {
            visits.clear();
            for parent in dying.drain(..) {
                self.children.for_each(parent, |child| visits.push((child, parent)));
            }
            visits.retain(|(child, _)| !dead.contains(*child) && self.flags_of_index(*child) & FLAG_ALIVE != 0);
            let legs: Vec<(&[u32], u64)> = visits
                .iter()
                .map(|(child, _)| {
                    let words = self.words_of(*child);
                    (words, every_leg(words))
                })
                .collect();
            for (&(child, parent), &(words, every)) in visits.iter().zip(&legs) {
                if every == 0 || dead.contains(child) {
                    continue; // a lot has no legs to lose; a child may have died earlier in this wave
                }
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
        removed
    }

    /// The legs (one bit each) with a parent that was dead before this recall began.
    fn legs_broken_before(&self, words: &[u32]) -> u64 {
        split_legs(words).enumerate().fold(0, |broken, (leg_index, leg)| {
            let has_dead_parent = leg.iter().any(|word| self.flags_of_index(parent_of(*word)) & FLAG_ALIVE == 0);
            broken | leg_bit(leg_index, has_dead_parent)
        })
    }

    /// Every memory with `target` anywhere in its history (through dead nodes too) whose flags
    /// pass `keep`.
    fn descendants(&self, target: u32, keep: impl Fn(u8) -> bool) -> Vec<u32> {
        let mut seen = NodeSet::new(self.slots.len());
        let mut queue = alloc::vec![target];
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
        found
    }

    /// Recalled memories with `id` in their history: what an Erase of an already recalled id
    /// covers besides the id itself. Ascending.
    pub fn dead_descendants(&self, id: u64) -> Result<Vec<u64>, Error> {
        self.slot(id)?;
        let mut found = self.descendants((id - 1) as u32, |flags| flags & FLAG_ALIVE == 0);
        found.sort_unstable();
        Ok(found.into_iter().map(|index| u64::from(index) + 1).collect())
    }
}

// A memory's legs fit the bits of one word.
const _: () = assert!(crate::limits::LEGS_PER_MEMORY_MAX <= 64);

/// Bit `leg_index` when `set`. Legs past the 64th, which no checked memory has, get no bit.
fn leg_bit(leg_index: usize, set: bool) -> u64 {
    if set {
        1u64.checked_shl(leg_index as u32).unwrap_or(0)
    } else {
        0
    }
}

/// The legs (one bit each) that have `parent` among their parents.
fn legs_holding(words: &[u32], parent: u32) -> u64 {
    split_legs(words)
        .enumerate()
        .fold(0, |legs, (leg_index, leg)| legs | leg_bit(leg_index, leg.iter().any(|word| parent_of(*word) == parent)))
}

/// Every leg of a memory, one bit each.
fn every_leg(words: &[u32]) -> u64 {
    split_legs(words).enumerate().fold(0, |legs, (leg_index, _)| legs | leg_bit(leg_index, true))
}

#[cfg(test)]
mod tests {
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
}
