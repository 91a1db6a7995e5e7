//! A reference model of cheesedb's semantics, written from the definitions alone and kept
//! deliberately naive: sets and loops, no cleverness, so that it is obviously right.

use std::collections::{BTreeMap, BTreeSet};

/// Why the model refuses a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No leg at all.
    NoLegs,
    /// A leg without parents.
    EmptyLeg,
    /// A parent that does not exist.
    UnknownParent,
    /// A parent that was recalled.
    DeadParent,
    /// The recalled id does not exist.
    UnknownId,
    /// The recalled id is already dead, and recalling it again would remove nothing and
    /// erase nothing.
    AlreadyRecalled,
}

#[derive(Debug, Clone)]
struct ModelNode {
    legs: Vec<BTreeSet<u64>>,
    alive: bool,
    erased: bool,
}

/// The expected state of one agent.
#[derive(Debug, Clone, Default)]
pub struct Model {
    nodes: BTreeMap<u64, ModelNode>,
}

impl Model {
    fn next_id(&self) -> u64 {
        self.nodes.len() as u64 + 1
    }

    /// Adds a lot; returns its id.
    pub fn add_lot(&mut self) -> u64 {
        let id = self.next_id();
        self.nodes.insert(id, ModelNode { legs: Vec::new(), alive: true, erased: false });
        id
    }

    /// Adds a memory, or says why it is refused.
    pub fn remember(&mut self, legs: &[Vec<u64>]) -> Result<u64, Refusal> {
        if legs.is_empty() {
            return Err(Refusal::NoLegs);
        }
        for leg in legs {
            if leg.is_empty() {
                return Err(Refusal::EmptyLeg);
            }
            // A leg is a set: its parents are checked in ascending order, once each.
            let parents: BTreeSet<u64> = leg.iter().copied().collect();
            for parent in &parents {
                match self.nodes.get(parent) {
                    None => return Err(Refusal::UnknownParent),
                    Some(node) if !node.alive => return Err(Refusal::DeadParent),
                    Some(_) => {}
                }
            }
        }
        let id = self.next_id();
        let legs = legs.iter().map(|leg| leg.iter().copied().collect()).collect();
        self.nodes.insert(id, ModelNode { legs, alive: true, erased: false });
        Ok(id)
    }

    fn is_alive(&self, id: u64) -> bool {
        self.nodes.get(&id).is_some_and(|node| node.alive)
    }

    /// Whether `ancestor` is anywhere in the history of `id`, through any legs and any nodes.
    fn descends_from(&self, id: u64, ancestor: u64) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(current) = stack.pop() {
            let Some(node) = self.nodes.get(&current) else { continue };
            for parent in node.legs.iter().flatten() {
                if *parent == ancestor {
                    return true;
                }
                if seen.insert(*parent) {
                    stack.push(*parent);
                }
            }
        }
        false
    }

    /// What recalling `id` would remove, ascending, without changing anything: the answer of
    /// an Untrusted recall.
    pub fn preview(&self, id: u64, strict: bool) -> Result<Vec<u64>, Refusal> {
        self.preview_with(id, strict, false)
    }

    /// What `recall(id, strict, erase)` would return, without changing anything.
    pub fn preview_with(&self, id: u64, strict: bool, erase: bool) -> Result<Vec<u64>, Refusal> {
        self.plan(id, strict, erase).map(|(removed, _)| removed)
    }

    /// The memories a recall removes and the nodes it erases. A recall of a dead id applies its
    /// own mode and removal to what is there now, and is refused only when it removes nothing
    /// and does not erase.
    fn plan(&self, id: u64, strict: bool, erase: bool) -> Result<(Vec<u64>, Vec<u64>), Refusal> {
        let Some(node) = self.nodes.get(&id) else { return Err(Refusal::UnknownId) };
        let repeated = !node.alive;
        let removed: Vec<u64> = if strict {
            self.nodes.keys().copied().filter(|other| self.is_alive(*other) && self.descends_from(*other, id)).collect()
        } else {
            let mut dead: BTreeSet<u64> =
                self.nodes.iter().filter(|(_, node)| !node.alive).map(|(id, _)| *id).collect();
            dead.insert(id);
            loop {
                let newly_dead: Vec<u64> = self
                    .nodes
                    .iter()
                    .filter(|(other, node)| !dead.contains(other) && !node.legs.is_empty())
                    .filter(|(_, node)| node.legs.iter().all(|leg| leg.iter().any(|parent| dead.contains(parent))))
                    .map(|(other, _)| *other)
                    .collect();
                if newly_dead.is_empty() {
                    break;
                }
                dead.extend(newly_dead);
            }
            dead.into_iter().filter(|other| *other != id && self.is_alive(*other)).collect()
        };
        if repeated && removed.is_empty() && !erase {
            return Err(Refusal::AlreadyRecalled);
        }
        let erased: Vec<u64> = match (erase, repeated) {
            (false, _) => Vec::new(),
            (true, false) => removed.iter().copied().chain([id]).collect(),
            // Again: the id, every dead node with it in its history, and what dies now.
            (true, true) => self
                .nodes
                .keys()
                .copied()
                .filter(|other| {
                    *other == id
                        || (self.descends_from(*other, id) && (!self.is_alive(*other) || removed.contains(other)))
                })
                .collect(),
        };
        Ok((removed, erased))
    }

    /// Recalls `id`; returns what was removed. With `erase`, marks the text of `id` and of what
    /// was removed as erased; a dead `id` recalled again with `erase` also erases its dead
    /// descendants.
    pub fn recall(&mut self, id: u64, strict: bool, erase: bool) -> Result<Vec<u64>, Refusal> {
        let (removed, erased) = self.plan(id, strict, erase)?;
        for dead in removed.iter().chain([&id]) {
            if let Some(node) = self.nodes.get_mut(dead) {
                node.alive = false;
            }
        }
        for gone in erased {
            if let Some(node) = self.nodes.get_mut(&gone) {
                node.erased = true;
            }
        }
        Ok(removed)
    }

    /// Ids of alive lots (`memories` false) or memories (true), ascending.
    pub fn alive(&self, memories: bool) -> Vec<u64> {
        self.nodes
            .iter()
            .filter(|(_, node)| node.alive && node.legs.is_empty() != memories)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Every id ever added.
    pub fn ids(&self) -> Vec<u64> {
        self.nodes.keys().copied().collect()
    }

    /// Whether an Erase covered `id`.
    pub fn is_erased(&self, id: u64) -> bool {
        self.nodes.get(&id).is_some_and(|node| node.erased)
    }

    /// Whether `id` was recalled.
    pub fn is_dead(&self, id: u64) -> bool {
        self.nodes.get(&id).is_some_and(|node| !node.alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_example() {
        let mut model = Model::default();
        let (a, b, c) = (model.add_lot(), model.add_lot(), model.add_lot());
        let m1 = model.remember(&[vec![a], vec![b]]).unwrap();
        let m2 = model.remember(&[vec![c]]).unwrap();
        let m3 = model.remember(&[vec![m1, m2]]).unwrap();
        assert_eq!(model.preview(c, false), Ok(vec![m2, m3]));
        assert_eq!(model.preview(a, true), Ok(vec![m1, m3]));
        assert_eq!(model.recall(c, false, false), Ok(vec![m2, m3]));
        assert_eq!(model.alive(true), vec![m1]);
        assert_eq!(model.remember(&[vec![c]]), Err(Refusal::DeadParent));
    }
}
