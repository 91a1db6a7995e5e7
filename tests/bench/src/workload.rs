//! The data every engine gets: a seeded stream of lots and memories, the same for each engine,
//! generated in batches so that a million memories never sit in RAM at once.
//!
//! Three kinds of nodes are interleaved at random:
//! - background lots and memories: a memory has 1 to 3 legs of 1 to 3 parents each, drawn from
//!   the background written before it;
//! - families: one root lot and the memories learned from it. Every leg of a family memory holds
//!   a node of its family (plus 0 to 2 background parents), so recalling the root removes the
//!   whole family, Fair or Strict;
//! - witnesses of a family: one leg touches the family, the other legs only the background. Fair
//!   keeps them (another leg still holds) and Strict removes them, so Fair has real legs to check.
//!
//! Nothing is ever built on a family member or a witness except its own family, so a recall of
//! a root removes exactly the family (Fair) or the family and its witnesses (Strict).

use fastrand::Rng;

/// Labels of lots, cycled: the kinds of sources an agent learns from.
const LOT_LABELS: [&str; 4] = ["user_message", "web_page", "tool_result", "document"];
/// Random letters in a memory's text, after its "memory N: " prefix.
const MEMORY_TEXT_LETTERS: usize = 56;
/// Random letters in a lot's text, after its "source N: " prefix.
const LOT_TEXT_LETTERS: usize = 120;

/// The shape of the data, in counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Every memory written at setup, families and witnesses included.
    pub memories: u64,
    /// Background lots written at setup (family roots come on top).
    pub lots: u64,
    /// How many families; each is recalled once, by one of the recall scenarios.
    pub families: usize,
    /// Memories in each family: what recalling its root removes (Fair).
    pub family_memories: u64,
    /// Witnesses of each family: what Strict removes on top of the family.
    pub family_witnesses: u64,
}

impl Shape {
    /// Background memories: everything that is neither a family member nor a witness.
    pub fn background_memories(&self) -> u64 {
        self.memories.saturating_sub(self.families as u64 * (self.family_memories + self.family_witnesses))
    }

    /// Every lot and memory written at setup.
    pub fn nodes(&self) -> u64 {
        self.memories + self.lots + self.families as u64
    }
}

/// One lot or memory to write. Parents are ids, which both engines hand out the same way:
/// sequentially from 1, lots and memories alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlannedNode {
    /// A source.
    Lot {
        /// What kind of source.
        label: &'static str,
        /// Its text.
        content: Vec<u8>,
    },
    /// A memory: it lives while at least one leg has all its parents alive.
    Memory {
        /// Its text.
        content: Vec<u8>,
        /// Each leg's parents.
        legs: Vec<Vec<u64>>,
    },
}

impl PlannedNode {
    /// Whether this is a memory.
    pub fn is_memory(&self) -> bool {
        matches!(self, PlannedNode::Memory { .. })
    }
}

/// A family after setup: what recalling its root must remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The lot every member descends from.
    pub root: u64,
    /// Memories that die with the root, Fair or Strict.
    pub members: u64,
    /// Memories that only Strict removes.
    pub witnesses: u64,
}

#[derive(Debug, Clone, Default)]
struct FamilyState {
    root: Option<u64>,
    /// The root and the members written so far: the family parents a new member may name.
    nodes: Vec<u64>,
    members_left: u64,
    witnesses_left: u64,
}

/// What to write next, picked at random with weights equal to what is left of each kind, so
/// every kind is spread evenly over the whole history.
#[derive(Debug, Clone, Copy)]
enum Pick {
    BackgroundLot,
    BackgroundMemory,
    Member(usize),
    Witness(usize),
}

/// The generator. Two generators made with the same shape and seed give the same nodes.
#[derive(Debug)]
pub struct Workload {
    shape: Shape,
    random: Rng,
    next_id: u64,
    /// Ids of background lots and memories written so far: the parents anything may name.
    background: Vec<u64>,
    families: Vec<FamilyState>,
    background_lots_left: u64,
    background_memories_left: u64,
}

impl Workload {
    /// A generator of `shape`'s setup data, then of extra memories for the write scenarios.
    pub fn new(shape: Shape, seed: u64) -> Workload {
        let family = FamilyState {
            members_left: shape.family_memories,
            witnesses_left: shape.family_witnesses,
            ..FamilyState::default()
        };
        Workload {
            shape,
            random: Rng::with_seed(seed),
            next_id: 1,
            background: Vec::with_capacity((shape.lots + shape.background_memories()) as usize),
            families: vec![family; shape.families],
            background_lots_left: shape.lots.max(1),
            background_memories_left: shape.background_memories(),
        }
    }

    /// Setup nodes not yet handed out.
    fn setup_nodes_left(&self) -> u64 {
        let family_nodes: u64 = self
            .families
            .iter()
            .map(|family| family.members_left + family.witnesses_left + u64::from(family.root.is_none()))
            .sum();
        self.background_lots_left + self.background_memories_left + family_nodes
    }

    /// The next setup nodes, at most `count_max`; empty once setup is complete.
    pub fn next_setup_batch(&mut self, count_max: usize) -> Vec<PlannedNode> {
        let mut batch = Vec::with_capacity(count_max);
        while batch.len() < count_max {
            match self.next_setup_node() {
                Some(node) => batch.push(node),
                None => break,
            }
        }
        batch
    }

    fn next_setup_node(&mut self) -> Option<PlannedNode> {
        if self.setup_nodes_left() == 0 {
            return None;
        }
        // The background needs a node before any memory can name one.
        let pick = if self.background.is_empty() { Pick::BackgroundLot } else { self.pick() };
        let node = match pick {
            Pick::BackgroundLot => {
                self.background_lots_left -= 1;
                let id = self.take_id();
                self.background.push(id);
                self.lot(id)
            }
            Pick::BackgroundMemory => {
                self.background_memories_left -= 1;
                let id = self.take_id();
                let node = self.background_memory(id);
                self.background.push(id);
                node
            }
            Pick::Member(family) | Pick::Witness(family) if self.families[family].root.is_none() => {
                let id = self.take_id();
                self.families[family].root = Some(id);
                self.families[family].nodes.push(id);
                self.lot(id)
            }
            Pick::Member(family) => {
                self.families[family].members_left -= 1;
                let id = self.take_id();
                let node = self.member(id, family);
                self.families[family].nodes.push(id);
                node
            }
            Pick::Witness(family) => {
                self.families[family].witnesses_left -= 1;
                let id = self.take_id();
                self.witness(id, family)
            }
        };
        Some(node)
    }

    fn pick(&mut self) -> Pick {
        let total = self.setup_nodes_left();
        let mut place = self.random.u64(0..total);
        if place < self.background_lots_left {
            return Pick::BackgroundLot;
        }
        place -= self.background_lots_left;
        if place < self.background_memories_left {
            return Pick::BackgroundMemory;
        }
        place -= self.background_memories_left;
        for (index, family) in self.families.iter().enumerate() {
            let members = family.members_left + u64::from(family.root.is_none());
            if place < members {
                return Pick::Member(index);
            }
            place -= members;
            if place < family.witnesses_left {
                return Pick::Witness(index);
            }
            place -= family.witnesses_left;
        }
        // Unreachable while the counts above add up to `total`; the background is a safe answer.
        Pick::BackgroundMemory
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The families and what recalling each root removes; complete once setup is.
    pub fn families(&self) -> Vec<Family> {
        self.families
            .iter()
            .filter_map(|family| {
                let root = family.root?;
                let members = family.nodes.len() as u64 - 1;
                Some(Family { root, members, witnesses: self.shape.family_witnesses - family.witnesses_left })
            })
            .collect()
    }

    /// Lots and memories written at setup so far.
    pub fn setup_nodes_written(&self) -> u64 {
        self.next_id - 1
    }

    /// A memory for the write scenarios: background parents only, so recalls never reach it.
    /// Its id is not tracked, since concurrent writers may take ids in any order.
    pub fn extra_memory(&mut self) -> PlannedNode {
        let number = self.random.u64(..);
        PlannedNode::Memory {
            content: self.text("extra memory", number, MEMORY_TEXT_LETTERS),
            legs: self.background_legs(),
        }
    }

    /// A lot for the write scenarios, numbered at random like the extra memories.
    pub fn extra_lot(&mut self) -> PlannedNode {
        let number = self.random.u64(..);
        let label = LOT_LABELS[(number % LOT_LABELS.len() as u64) as usize];
        PlannedNode::Lot { label, content: self.text("extra source", number, LOT_TEXT_LETTERS) }
    }

    fn lot(&mut self, id: u64) -> PlannedNode {
        let label = LOT_LABELS[(id % LOT_LABELS.len() as u64) as usize];
        PlannedNode::Lot { label, content: self.text("source", id, LOT_TEXT_LETTERS) }
    }

    fn background_memory(&mut self, id: u64) -> PlannedNode {
        PlannedNode::Memory { content: self.text("memory", id, MEMORY_TEXT_LETTERS), legs: self.background_legs() }
    }

    fn member(&mut self, id: u64, family: usize) -> PlannedNode {
        let leg_count = self.random.usize(1..=3);
        let legs = (0..leg_count).map(|_| self.family_leg(family)).collect();
        PlannedNode::Memory { content: self.text("memory", id, MEMORY_TEXT_LETTERS), legs }
    }

    fn witness(&mut self, id: u64, family: usize) -> PlannedNode {
        let mut legs = vec![self.family_leg(family)];
        let background_leg_count = self.random.usize(1..=2);
        legs.extend((0..background_leg_count).map(|_| self.background_leg()));
        PlannedNode::Memory { content: self.text("memory", id, MEMORY_TEXT_LETTERS), legs }
    }

    fn background_legs(&mut self) -> Vec<Vec<u64>> {
        let leg_count = self.random.usize(1..=3);
        (0..leg_count).map(|_| self.background_leg()).collect()
    }

    /// 1 to 3 distinct background parents.
    fn background_leg(&mut self) -> Vec<u64> {
        let parent_count = self.random.usize(1..=3);
        let mut leg = Vec::with_capacity(parent_count);
        self.add_background_parents(&mut leg, parent_count);
        leg
    }

    /// One parent of the family and 0 to 2 distinct background parents.
    fn family_leg(&mut self, family: usize) -> Vec<u64> {
        let nodes = &self.families[family].nodes;
        let mut leg = vec![nodes[self.random.usize(..nodes.len())]];
        let background_count = self.random.usize(0..=2);
        self.add_background_parents(&mut leg, background_count);
        leg
    }

    fn add_background_parents(&mut self, leg: &mut Vec<u64>, count: usize) {
        let length_wanted = leg.len() + count;
        // With few background nodes there may not be `count` distinct ones: stop after a few
        // draws rather than loop.
        for _ in 0..count * 4 {
            if leg.len() >= length_wanted {
                break;
            }
            let parent = self.background[self.random.usize(..self.background.len())];
            if !leg.contains(&parent) {
                leg.push(parent);
            }
        }
    }

    /// "memory 42: " and random lowercase letters: distinct per node, so a byte search can
    /// tell whether an erased text is still in a file.
    fn text(&mut self, prefix: &str, number: u64, letters: usize) -> Vec<u8> {
        let mut text = format!("{prefix} {number}: ").into_bytes();
        text.extend((0..letters).map(|_| self.random.u8(b'a'..=b'z')));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_shape() -> Shape {
        Shape { memories: 2_000, lots: 200, families: 4, family_memories: 100, family_witnesses: 10 }
    }

    fn all_setup_nodes(workload: &mut Workload) -> Vec<PlannedNode> {
        let mut nodes = Vec::new();
        loop {
            let batch = workload.next_setup_batch(97);
            if batch.is_empty() {
                return nodes;
            }
            nodes.extend(batch);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_data() {
        let first = all_setup_nodes(&mut Workload::new(small_shape(), 7));
        let second = all_setup_nodes(&mut Workload::new(small_shape(), 7));
        assert_eq!(first, second);
        assert_ne!(first, all_setup_nodes(&mut Workload::new(small_shape(), 8)));
    }

    #[test]
    fn setup_writes_exactly_the_shape() {
        let shape = small_shape();
        let mut workload = Workload::new(shape, 1);
        let nodes = all_setup_nodes(&mut workload);
        let memories = nodes.iter().filter(|node| node.is_memory()).count() as u64;
        assert_eq!(memories, shape.memories);
        assert_eq!(nodes.len() as u64, shape.nodes());
        let families = workload.families();
        assert_eq!(families.len(), 4);
        for family in families {
            assert_eq!((family.members, family.witnesses), (100, 10));
        }
    }

    #[test]
    fn legs_name_only_earlier_nodes_without_repeats() {
        let nodes = all_setup_nodes(&mut Workload::new(small_shape(), 3));
        for (index, node) in nodes.iter().enumerate() {
            let id = index as u64 + 1;
            if let PlannedNode::Memory { legs, .. } = node {
                assert!((1..=3).contains(&legs.len()));
                for leg in legs {
                    assert!((1..=3).contains(&leg.len()), "{leg:?}");
                    assert!(leg.iter().all(|parent| *parent < id));
                    let mut distinct = leg.clone();
                    distinct.sort_unstable();
                    distinct.dedup();
                    assert_eq!(distinct.len(), leg.len());
                }
            }
        }
    }
}
