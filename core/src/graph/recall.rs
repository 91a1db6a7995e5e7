//! The two recall walks. Both touch only what descends from the recalled node, so their cost
//! follows what they remove, not the size of the agent.

use alloc::vec::Vec;
use hashbrown::HashSet;

use super::legs::{parent_of, split_legs};
use super::{Graph, FLAG_ALIVE};
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
    /// children of a node that died can lose a leg, so the walk follows child edges.
    fn fair_closure(&self, target: u32) -> Vec<u32> {
        let mut dead: HashSet<u32> = HashSet::new();
        dead.insert(target);
        let mut queue = alloc::vec![target];
        let mut removed = Vec::new();
        while let Some(node) = queue.pop() {
            let mut doomed = Vec::new();
            self.children.for_each(node, |child| {
                let alive = self.flags_of_index(child) & FLAG_ALIVE != 0;
                if alive && !dead.contains(&child) && !self.has_holding_leg(child, &dead) {
                    doomed.push(child);
                }
            });
            for child in doomed {
                if dead.insert(child) {
                    removed.push(child);
                    queue.push(child);
                }
            }
        }
        removed
    }

    fn has_holding_leg(&self, index: u32, dead: &HashSet<u32>) -> bool {
        split_legs(self.words_of(index)).any(|leg| {
            leg.iter().all(|word| {
                let parent = parent_of(*word);
                self.flags_of_index(parent) & FLAG_ALIVE != 0 && !dead.contains(&parent)
            })
        })
    }

    /// Every memory with `target` anywhere in its history (through dead nodes too) whose flags
    /// pass `keep`.
    fn descendants(&self, target: u32, keep: impl Fn(u8) -> bool) -> Vec<u32> {
        let mut seen: HashSet<u32> = HashSet::new();
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

#[cfg(test)]
mod tests {
    use super::super::Location;
    use super::*;
    use alloc::vec;

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
