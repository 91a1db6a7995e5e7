//! The reference model: what DESIGN section 2 says an agent's memory is, written as plainly as
//! possible, with no code shared with the engine's graph.
//!
//! Nodes are a vector; legs are vectors of ids; Fair recall is a fixpoint over every memory;
//! Strict recall walks every memory's history. Search is a scan: a keyword search finds every
//! alive node sharing a word with the query, a vector search scores every alive vector by its
//! cosine, computed in f64. Read tracking adds a session's reads to every leg; trust levels are
//! computed node after node in id order (parents are always older). Slow and obvious on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cheesedb_core::internal::search::for_each_word;
use cheesedb_core::{Error, Id, Limit, Mode, Removal, TrustLevel, VectorProblem};

/// Whether a node's text is still in the files, as far as the model can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// The text must be readable.
    Present,
    /// The text must be gone from every file.
    Absent,
    /// Either (an unfinished compaction may or may not have removed it).
    Either,
}

/// Lot or memory, with what describes each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelKind {
    /// A source and its label.
    Lot {
        /// The label.
        label: String,
    },
    /// A memory and its legs (each leg's parents ascending, without repeats).
    Memory {
        /// The legs, the read ids of a tracked write added to each.
        legs: Vec<Vec<u64>>,
        /// The read ids that not every declared leg named, ascending (empty without tracking).
        tracked: Vec<u64>,
    },
}

/// One lot or memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelNode {
    /// Lot or memory.
    pub kind: ModelKind,
    /// The content written.
    pub content: Vec<u8>,
    /// The words of the content, lower-cased (shared by the copies of the model).
    pub words: Arc<BTreeSet<String>>,
    /// Not recalled.
    pub alive: bool,
    /// Where its text is.
    pub text: Text,
    /// Every vector attached to it, oldest first: each stays in the files until an Erase or a
    /// compaction takes the node's numbers.
    pub vectors: Vec<Vec<f32>>,
    /// Its vector now: the last one set, or none (never set, or its numbers erased).
    pub vector: Option<Vec<f32>>,
    /// Where the numbers of all its vectors are. `Present` promises nothing about the files:
    /// only an absence is checked.
    pub numbers: Text,
    /// Covered by an Erase the model knows happened (acknowledged, or found done after a
    /// crash): on an encrypted agent no key obtainable with the token may open its records,
    /// in the files now or in any copy taken before.
    pub erased: bool,
    /// An Erase that was not acknowledged, and whose effect nothing but the text shows (a
    /// repeated Erase of a dead id), may have covered it: only the engine knows. A later
    /// repeated Erase that the engine refuses as changing nothing settles it as erased.
    pub erase_in_doubt: bool,
}

impl ModelNode {
    fn new(kind: ModelKind, content: &[u8]) -> ModelNode {
        ModelNode {
            kind,
            content: content.to_vec(),
            words: Arc::new(words(content)),
            alive: true,
            text: Text::Present,
            vectors: Vec::new(),
            vector: None,
            numbers: Text::Present,
            erased: false,
            erase_in_doubt: false,
        }
    }

    fn attach(&mut self, vector: &[f32]) {
        self.vectors.push(vector.to_vec());
        self.vector = Some(vector.to_vec());
        // The new record holds numbers again.
        self.numbers = Text::Present;
    }
}

/// The words of `text`, lower-cased, each once. They come from the engine's own splitter: how
/// text is cut into words is the index's business (its own tests check it); what the model
/// checks is which nodes a search may return, whatever the words are.
pub fn words(text: &[u8]) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for_each_word(text, |word| {
        words.insert(word.to_string());
    });
    words
}

/// One write of a batch, with legs as given (the model sorts them as the engine's `Leg` does).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelWrite {
    /// A source.
    Lot {
        /// Its label.
        label: String,
        /// Its content.
        content: Vec<u8>,
    },
    /// A memory.
    Memory {
        /// Its content.
        content: Vec<u8>,
        /// Its legs.
        legs: Vec<Vec<u64>>,
        /// What the session read before it (empty: written without tracking).
        reads: Vec<u64>,
    },
    /// A vector attached to an alive node or one added earlier in the batch.
    Vector {
        /// The node.
        id: u64,
        /// The numbers.
        vector: Vec<f32>,
    },
}

/// Why `vector` can never be stored, whatever the agent holds: the engine's `InvalidVector`
/// problems other than the dimension.
pub fn vector_problem(vector: &[f32]) -> Option<VectorProblem> {
    if vector.is_empty() {
        return Some(VectorProblem::Empty);
    }
    if let Some(position) = vector.iter().position(|number| !number.is_finite()) {
        return Some(VectorProblem::NotFinite { position });
    }
    if vector.iter().all(|number| *number == 0.0) {
        return Some(VectorProblem::AllZero);
    }
    None
}

/// The cosine of `first` and `second`, in f64 (0 if either has no length).
pub fn cosine(first: &[f32], second: &[f32]) -> f64 {
    let dot: f64 = first.iter().zip(second).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
    let length = |vector: &[f32]| vector.iter().map(|a| f64::from(*a) * f64::from(*a)).sum::<f64>().sqrt();
    let lengths = length(first) * length(second);
    if lengths == 0.0 {
        0.0
    } else {
        dot / lengths
    }
}

/// One agent's memory as the model sees it. Ids are positions + 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentModel {
    /// Every node ever added, in id order.
    pub nodes: Vec<ModelNode>,
    /// The agent is encrypted: a lot's label is sealed with its text, so it goes when the text
    /// goes (an Erase destroys the key, a compaction drops the sealed bytes) and reads as empty.
    pub sealed: bool,
}

fn normalized(legs: &[Vec<u64>]) -> Vec<Vec<u64>> {
    legs.iter().map(|leg| leg.iter().copied().collect::<BTreeSet<u64>>().into_iter().collect()).collect()
}

/// The most parents a leg may have, read ids included.
const PARENTS_PER_LEG_MAX: usize = 64;
/// The most ids a session's read set holds: one past the limit, so that it still shows it is over.
pub const READ_SET_MAX_IDS: usize = PARENTS_PER_LEG_MAX + 1;

/// Notes `id` in a session's read set: once, and only while the set is not full.
pub fn note_read(reads: &mut BTreeSet<u64>, id: u64) {
    if reads.len() < READ_SET_MAX_IDS {
        reads.insert(id);
    }
}

/// A memory's legs with `reads` added to each, and which read ids count as tracked (those not
/// every declared leg named), or why the engine refuses before it looks at the parents: the
/// declared legs' shape first, then the limits (in the engine's words).
pub fn with_reads(legs: &[Vec<u64>], reads: &[u64]) -> Result<(Vec<Vec<u64>>, Vec<u64>), Error> {
    if reads.is_empty() {
        return Ok((legs.to_vec(), Vec::new()));
    }
    if legs.is_empty() {
        return Err(Error::NoLegs);
    }
    if let Some(leg_index) = legs.iter().position(Vec::is_empty) {
        return Err(Error::EmptyLeg { leg_index });
    }
    let over = |what, size: usize| Error::LimitExceeded { what, size: size as u64, limit: PARENTS_PER_LEG_MAX as u64 };
    let reads: BTreeSet<u64> = reads.iter().copied().collect();
    if reads.len() > PARENTS_PER_LEG_MAX {
        return Err(over(Limit::ReadSetIds, reads.len()));
    }
    let mut merged = Vec::new();
    for leg in legs {
        let leg: BTreeSet<u64> = leg.iter().chain(&reads).copied().collect();
        if leg.len() > PARENTS_PER_LEG_MAX {
            return Err(over(Limit::ParentsPerLegWithReadSet, leg.len()));
        }
        merged.push(leg.into_iter().collect());
    }
    let tracked = reads.into_iter().filter(|read| !legs.iter().all(|leg| leg.contains(read))).collect();
    Ok((merged, tracked))
}

impl AgentModel {
    /// An empty model of an encrypted agent (`sealed`) or a plaintext one.
    pub fn new(sealed: bool) -> AgentModel {
        AgentModel { nodes: Vec::new(), sealed }
    }

    /// The label lot `node` shows now: its label, or none once a sealed label went with its
    /// text. `None` when either may show (an unfinished compaction) or `node` is no lot.
    pub fn visible_label<'a>(&self, node: &'a ModelNode) -> Option<&'a str> {
        let ModelKind::Lot { label } = &node.kind else { return None };
        match (self.sealed, node.text) {
            (false, _) | (true, Text::Present) => Some(label),
            (true, Text::Absent) => Some(""),
            (true, Text::Either) => None,
        }
    }

    /// The id the next node gets.
    pub fn next_id(&self) -> u64 {
        self.nodes.len() as u64 + 1
    }

    /// The node `id`.
    pub fn node(&self, id: u64) -> Option<&ModelNode> {
        self.nodes.get(usize::try_from(id.checked_sub(1)?).ok()?)
    }

    fn node_mut(&mut self, id: u64) -> Option<&mut ModelNode> {
        self.nodes.get_mut(usize::try_from(id.checked_sub(1)?).ok()?)
    }

    /// Whether `id` is a node that is alive.
    pub fn is_alive(&self, id: u64) -> bool {
        self.node(id).is_some_and(|node| node.alive)
    }

    /// The alive lots, ascending.
    pub fn alive_lots(&self) -> Vec<u64> {
        self.ids()
            .filter(|id| self.node(*id).is_some_and(|node| node.alive && matches!(node.kind, ModelKind::Lot { .. })))
            .collect()
    }

    /// The alive memories, ascending.
    pub fn alive_memories(&self) -> Vec<u64> {
        self.ids()
            .filter(|id| self.node(*id).is_some_and(|node| node.alive && matches!(node.kind, ModelKind::Memory { .. })))
            .collect()
    }

    /// Every id, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u64> {
        1..self.next_id()
    }

    /// Why a memory with these legs would be refused, if it would; `pending` ids are allowed
    /// as parents too (earlier writes of the same batch).
    pub fn refusal(&self, legs: &[Vec<u64>], pending: &BTreeSet<u64>) -> Option<Error> {
        if legs.is_empty() {
            return Some(Error::NoLegs);
        }
        for (leg_index, leg) in normalized(legs).iter().enumerate() {
            if leg.is_empty() {
                return Some(Error::EmptyLeg { leg_index });
            }
            for parent in leg {
                if pending.contains(parent) {
                    continue;
                }
                match self.node(*parent) {
                    None => return Some(Error::UnknownId { id: Id::from(*parent) }),
                    Some(node) if !node.alive => return Some(Error::DeadParent { id: Id::from(*parent) }),
                    Some(_) => {}
                }
            }
        }
        None
    }

    /// Adds a source; returns its id.
    pub fn add_lot(&mut self, label: &str, content: &[u8]) -> u64 {
        self.nodes.push(ModelNode::new(ModelKind::Lot { label: label.to_string() }, content));
        self.nodes.len() as u64
    }

    /// Adds a memory, or says why not.
    pub fn remember(&mut self, content: &[u8], legs: &[Vec<u64>]) -> Result<u64, Error> {
        self.remember_tracked(content, legs, &[])
    }

    /// Adds a memory written after reading `reads`, or says why not.
    pub fn remember_tracked(&mut self, content: &[u8], legs: &[Vec<u64>], reads: &[u64]) -> Result<u64, Error> {
        let (legs, tracked) = with_reads(legs, reads)?;
        if let Some(refusal) = self.refusal(&legs, &BTreeSet::new()) {
            return Err(refusal);
        }
        self.nodes.push(ModelNode::new(ModelKind::Memory { legs: normalized(&legs), tracked }, content));
        Ok(self.nodes.len() as u64)
    }

    /// Why one step of a staged batch, adding `write` after the steps that staged `staged`,
    /// is refused against the agent as it is now: the checks of that write alone, the writes
    /// staged before counting as alive (the dimension of vectors is checked at the commit).
    pub fn staged_step_refusal(&self, staged: &[ModelWrite], write: &ModelWrite) -> Option<Error> {
        let nodes_staged = staged.iter().filter(|write| !matches!(write, ModelWrite::Vector { .. })).count() as u64;
        let pending: BTreeSet<u64> = (self.next_id()..self.next_id() + nodes_staged).collect();
        match write {
            ModelWrite::Lot { .. } => None,
            ModelWrite::Memory { legs, reads, .. } => match with_reads(legs, reads) {
                Ok((legs, _)) => self.refusal(&legs, &pending),
                Err(refusal) => Some(refusal),
            },
            ModelWrite::Vector { id, vector } => self.vector_refusal(*id, vector, &pending),
        }
    }

    /// Applies a whole batch, or refuses it whole; returns the ids of its lots and memories.
    /// Each write is checked in turn; the dimension of its vectors last, against the alive
    /// vectors before the batch.
    pub fn batch(&mut self, writes: &[ModelWrite]) -> Result<Vec<u64>, Error> {
        let mut next = self.clone();
        let mut pending = BTreeSet::new();
        let mut ids = Vec::new();
        let mut vectors = Vec::new();
        for write in writes {
            let id = match write {
                ModelWrite::Lot { label, content } => next.add_lot(label, content),
                ModelWrite::Memory { content, legs, reads } => {
                    let (legs, tracked) = with_reads(legs, reads)?;
                    if let Some(refusal) = self.refusal(&legs, &pending) {
                        return Err(refusal);
                    }
                    next.nodes.push(ModelNode::new(ModelKind::Memory { legs: normalized(&legs), tracked }, content));
                    next.nodes.len() as u64
                }
                ModelWrite::Vector { id, vector } => {
                    if let Some(refusal) = self.vector_refusal(*id, vector, &pending) {
                        return Err(refusal);
                    }
                    vectors.push((*id, vector));
                    continue;
                }
            };
            pending.insert(id);
            ids.push(id);
        }
        let mut expected = self.vector_dimension();
        for (_, vector) in &vectors {
            match expected {
                Some(expected) if expected != vector.len() => {
                    let problem = VectorProblem::DimensionMismatch { expected, found: vector.len() };
                    return Err(Error::InvalidVector { problem });
                }
                _ => expected = Some(vector.len()),
            }
        }
        for (id, vector) in vectors {
            if let Some(node) = next.node_mut(id) {
                node.attach(vector);
            }
        }
        *self = next;
        Ok(ids)
    }

    /// The dimension of the agent's alive vectors, if it has one (then they all have it).
    pub fn vector_dimension(&self) -> Option<usize> {
        self.nodes.iter().filter(|node| node.alive).find_map(|node| node.vector.as_ref()).map(Vec::len)
    }

    /// Why `vector` could not be attached to `id` (`pending` ids, earlier writes of the same
    /// batch, count as alive), the dimension aside.
    pub fn vector_refusal(&self, id: u64, vector: &[f32], pending: &BTreeSet<u64>) -> Option<Error> {
        if !pending.contains(&id) {
            match self.node(id) {
                None => return Some(Error::UnknownId { id: Id::from(id) }),
                Some(node) if !node.alive => return Some(Error::AlreadyRecalled { id: Id::from(id) }),
                Some(_) => {}
            }
        }
        vector_problem(vector).map(|problem| Error::InvalidVector { problem })
    }

    /// Attaches `vector` to the alive node `id`, replacing its vector, or says why not. The
    /// vector must have the dimension of the alive vectors, its own old one included.
    pub fn set_vector(&mut self, id: u64, vector: &[f32]) -> Result<(), Error> {
        if let Some(refusal) = self.vector_refusal(id, vector, &BTreeSet::new()) {
            return Err(refusal);
        }
        if let Some(expected) = self.vector_dimension().filter(|expected| *expected != vector.len()) {
            let problem = VectorProblem::DimensionMismatch { expected, found: vector.len() };
            return Err(Error::InvalidVector { problem });
        }
        if let Some(node) = self.node_mut(id) {
            node.attach(vector);
        }
        Ok(())
    }

    /// What a keyword search for `query` must find: every alive node whose text is still
    /// there and shares at least one word with the query (see [`words`]).
    pub fn keyword_hits(&self, query: &str) -> BTreeSet<u64> {
        let wanted = words(query.as_bytes());
        self.ids()
            .zip(&self.nodes)
            .filter(|(_, node)| node.alive && node.text != Text::Absent)
            .filter(|(_, node)| !node.words.is_disjoint(&wanted))
            .map(|(id, _)| id)
            .collect()
    }

    /// What a vector search for `query` must find: every alive node with a vector, with the
    /// cosine of its vector and the query.
    pub fn vector_hits(&self, query: &[f32]) -> BTreeMap<u64, f64> {
        self.ids()
            .zip(&self.nodes)
            .filter(|(_, node)| node.alive)
            .filter_map(|(id, node)| node.vector.as_ref().map(|vector| (id, cosine(vector, query))))
            .collect()
    }

    /// The legs of `id` (none for a lot or an unknown id).
    fn legs(&self, id: u64) -> &[Vec<u64>] {
        match self.node(id).map(|node| &node.kind) {
            Some(ModelKind::Memory { legs, .. }) => legs,
            _ => &[],
        }
    }

    /// The trust level of every node, in id order, under `rules` (a label they do not name is
    /// normal): a lot has its label's; a memory the best, over the legs that count, of the worst
    /// level among the leg's parents. For an alive memory the legs that count are those whose
    /// parents are all alive; for a recalled one, all of them. Parents are older than their
    /// children, so one pass in id order sees every parent's level first.
    pub fn trust_levels(&self, rules: &BTreeMap<String, TrustLevel>) -> Vec<TrustLevel> {
        let mut levels: Vec<TrustLevel> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let level = match &node.kind {
                // A sealed label that went with its text is no label: the default level. (A
                // label in doubt is taken as there: the full check settles text before trust.)
                ModelKind::Lot { label } => {
                    let label = self.visible_label(node).unwrap_or(label);
                    rules.get(label).copied().unwrap_or(TrustLevel::Normal)
                }
                ModelKind::Memory { legs, .. } => {
                    let level_of = |id: &u64| levels.get(usize::try_from(*id - 1).unwrap_or(usize::MAX)).copied();
                    let counts = |leg: &&Vec<u64>| !node.alive || leg.iter().all(|parent| self.is_alive(*parent));
                    legs.iter()
                        .filter(counts)
                        .filter_map(|leg| leg.iter().map(level_of).min().flatten())
                        .max()
                        .unwrap_or(TrustLevel::Low)
                }
            };
            levels.push(level);
        }
        levels
    }

    /// Whether `ancestor` is anywhere in the history of `id` (through any node, dead or alive).
    pub fn has_in_history(&self, id: u64, ancestor: u64) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(node) = stack.pop() {
            for parent in self.legs(node).iter().flatten() {
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

    /// What recalling `id` would remove (not `id`), ascending, or why it cannot be recalled:
    /// the answer of an Untrusted recall.
    pub fn preview(&self, id: u64, mode: Mode) -> Result<Vec<u64>, Error> {
        self.plan(id, mode, Removal::Untrusted).map(|(removed, _)| removed)
    }

    /// What `recall(id, mode, removal)` would return, without changing anything.
    pub fn preview_with(&self, id: u64, mode: Mode, removal: Removal) -> Result<Vec<u64>, Error> {
        self.plan(id, mode, removal).map(|(removed, _)| removed)
    }

    /// What a recall removes and whose text it erases. A recall of a dead id applies its own
    /// mode and removal to what is there now, and is refused only when it removes nothing and
    /// erases nothing an Erase did not take already.
    fn plan(&self, id: u64, mode: Mode, removal: Removal) -> Result<(Vec<u64>, Vec<u64>), Error> {
        let Some(node) = self.node(id) else { return Err(Error::UnknownId { id: Id::from(id) }) };
        let repeated = !node.alive;
        let memories: Vec<u64> = self.alive_memories();
        let removed: Vec<u64> = match mode {
            Mode::Strict => memories.into_iter().filter(|memory| self.has_in_history(*memory, id)).collect(),
            Mode::Fair => {
                let mut dead: BTreeSet<u64> = BTreeSet::from([id]);
                loop {
                    let holds =
                        |leg: &Vec<u64>| leg.iter().all(|parent| self.is_alive(*parent) && !dead.contains(parent));
                    let newly: Vec<u64> = memories
                        .iter()
                        .copied()
                        .filter(|memory| !dead.contains(memory) && !self.legs(*memory).iter().any(holds))
                        .collect();
                    if newly.is_empty() {
                        break;
                    }
                    dead.extend(newly);
                }
                dead.remove(&id);
                dead.into_iter().collect()
            }
        };
        let erased: Vec<u64> = match (removal, repeated) {
            (Removal::Untrusted, _) => Vec::new(),
            (Removal::Erase, false) => removed.iter().copied().chain([id]).collect(),
            // Again: the id, every dead node with it in its history, and what dies now, but
            // none an Erase took already: nothing of it is left to take.
            (Removal::Erase, true) => self
                .ids()
                .filter(|other| {
                    *other == id
                        || (self.has_in_history(*other, id) && (!self.is_alive(*other) || removed.contains(other)))
                })
                .filter(|other| self.node(*other).is_some_and(|node| !node.erased))
                .collect(),
        };
        if repeated && removed.is_empty() && erased.is_empty() {
            return Err(Error::AlreadyRecalled { id: Id::from(id) });
        }
        Ok((removed, erased))
    }

    /// Recalls `id`; returns what died with it, ascending.
    pub fn recall(&mut self, id: u64, mode: Mode, removal: Removal) -> Result<Vec<u64>, Error> {
        let (removed, erased) = self.plan(id, mode, removal)?;
        for dead in removed.iter().chain([&id]) {
            if let Some(node) = self.node_mut(*dead) {
                node.alive = false;
            }
        }
        for gone in erased {
            if let Some(node) = self.node_mut(gone) {
                // An Erase takes the text and every vector record of the node.
                node.text = Text::Absent;
                node.numbers = Text::Absent;
                node.erased = true;
                node.erase_in_doubt = false;
            }
        }
        Ok(removed)
    }

    /// Whether an engine's refusal (`AlreadyRecalled`) of this recall is as right as the model's
    /// plan: a repeated Erase that kills nothing, and whose every node to erase is one an
    /// unacknowledged Erase may have covered already. Where it is, the refusal settles those
    /// nodes as erased, and the model takes that.
    pub fn settle_refused_erase(&mut self, id: u64, mode: Mode, removal: Removal) -> bool {
        let Ok((removed, erased)) = self.plan(id, mode, removal) else { return false };
        let repeated = self.node(id).is_some_and(|node| !node.alive);
        let in_doubt = |other: &u64| self.node(*other).is_some_and(|node| node.erase_in_doubt);
        if !repeated || removal != Removal::Erase || !removed.is_empty() || !erased.iter().all(in_doubt) {
            return false;
        }
        for settled in erased {
            if let Some(node) = self.node_mut(settled) {
                node.erased = true;
                node.erase_in_doubt = false;
            }
        }
        true
    }

    /// A finished compaction: every dead node's text and vectors are gone.
    pub fn compact(&mut self) {
        for node in &mut self.nodes {
            if !node.alive {
                node.text = Text::Absent;
                node.numbers = Text::Absent;
            }
        }
    }

    /// An unfinished compaction: every dead node's text and vectors that were there may be gone.
    pub fn compact_maybe(&mut self) {
        for node in &mut self.nodes {
            if !node.alive && node.text == Text::Present {
                node.text = Text::Either;
            }
            if !node.alive && node.numbers == Text::Present {
                node.numbers = Text::Either;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lots A, B, C; M1 = {A} or {B}; M2 = {C}; M3 = {M1, M2}.
    fn example() -> AgentModel {
        let mut model = AgentModel::default();
        for label in ["a", "b", "c"] {
            model.add_lot(label, label.as_bytes());
        }
        model.remember(b"m1", &[vec![1], vec![2]]).unwrap();
        model.remember(b"m2", &[vec![3]]).unwrap();
        model.remember(b"m3", &[vec![4, 5]]).unwrap();
        model
    }

    #[test]
    fn fair_recall_of_the_reference_example() {
        let mut model = example();
        assert_eq!(model.recall(3, Mode::Fair, Removal::Untrusted), Ok(vec![5, 6]));
        assert_eq!(model.alive_memories(), vec![4]);
    }

    #[test]
    fn strict_recall_follows_any_path() {
        let model = example();
        assert_eq!(model.preview(1, Mode::Strict), Ok(vec![4, 6]));
        assert_eq!(model.preview(1, Mode::Fair), Ok(vec![]));
    }

    #[test]
    fn fair_recall_reaches_a_fixpoint_through_chains() {
        let mut model = AgentModel::default();
        model.add_lot("a", b"a");
        model.remember(b"m2", &[vec![1]]).unwrap();
        model.remember(b"m3", &[vec![2]]).unwrap();
        model.remember(b"m4", &[vec![3], vec![1]]).unwrap();
        assert_eq!(model.preview(1, Mode::Fair), Ok(vec![2, 3, 4]));
    }

    #[test]
    fn refusals_match_the_engine_errors() {
        let mut model = example();
        model.recall(1, Mode::Strict, Removal::Untrusted).unwrap();
        assert_eq!(model.remember(b"x", &[]), Err(Error::NoLegs));
        assert_eq!(model.remember(b"x", &[vec![2], vec![]]), Err(Error::EmptyLeg { leg_index: 1 }));
        assert_eq!(model.remember(b"x", &[vec![99]]), Err(Error::UnknownId { id: Id::from(99) }));
        assert_eq!(model.remember(b"x", &[vec![1]]), Err(Error::DeadParent { id: Id::from(1) }));
        assert_eq!(model.recall(1, Mode::Fair, Removal::Untrusted), Err(Error::AlreadyRecalled { id: Id::from(1) }));
    }

    #[test]
    fn a_strict_recall_after_a_fair_one_removes_what_strict_reaches() {
        let mut model = example();
        assert_eq!(model.recall(1, Mode::Fair, Removal::Untrusted), Ok(vec![]));
        assert_eq!(model.preview(1, Mode::Strict), Ok(vec![4, 6]));
        assert_eq!(model.recall(1, Mode::Strict, Removal::Erase), Ok(vec![4, 6]));
        let absent: Vec<u64> = model.ids().filter(|id| model.node(*id).unwrap().text == Text::Absent).collect();
        assert_eq!(absent, vec![1, 4, 6]);
    }

    #[test]
    fn erase_of_a_dead_id_erases_its_dead_descendants() {
        let mut model = example();
        model.recall(1, Mode::Strict, Removal::Untrusted).unwrap();
        assert_eq!(model.recall(1, Mode::Fair, Removal::Erase), Ok(vec![]));
        let absent: Vec<u64> = model.ids().filter(|id| model.node(*id).unwrap().text == Text::Absent).collect();
        assert_eq!(absent, vec![1, 4, 6]);
    }

    #[test]
    fn a_batch_is_all_or_nothing() {
        let mut model = example();
        let writes = vec![
            ModelWrite::Lot { label: "l".to_string(), content: b"l".to_vec() },
            ModelWrite::Memory { content: b"m".to_vec(), legs: vec![vec![7]], reads: vec![] },
            ModelWrite::Memory { content: b"bad".to_vec(), legs: vec![vec![42]], reads: vec![] },
        ];
        assert_eq!(model.batch(&writes), Err(Error::UnknownId { id: Id::from(42) }));
        assert_eq!(model.next_id(), 7);
        assert_eq!(model.batch(writes.get(..2).unwrap()), Ok(vec![7, 8]));
    }

    fn mismatch(expected: usize, found: usize) -> Error {
        Error::InvalidVector { problem: VectorProblem::DimensionMismatch { expected, found } }
    }

    #[test]
    fn set_vector_refuses_as_the_engine_does() {
        let mut model = example();
        model.recall(1, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(model.set_vector(9, &[1.0]), Err(Error::UnknownId { id: Id::from(9) }));
        assert_eq!(model.set_vector(1, &[]), Err(Error::AlreadyRecalled { id: Id::from(1) }));
        let invalid = |problem| Err(Error::InvalidVector { problem });
        assert_eq!(model.set_vector(2, &[]), invalid(VectorProblem::Empty));
        assert_eq!(model.set_vector(2, &[1.0, f32::NAN]), invalid(VectorProblem::NotFinite { position: 1 }));
        assert_eq!(model.set_vector(2, &[0.0, 0.0]), invalid(VectorProblem::AllZero));
        assert_eq!(model.set_vector(2, &[1.0, 0.0]), Ok(()));
        // The only vector cannot be replaced by one of another dimension either.
        assert_eq!(model.set_vector(2, &[1.0, 0.0, 0.0]), Err(mismatch(2, 3)));
        assert_eq!(model.set_vector(3, &[0.0, 2.0]), Ok(()));
        assert_eq!(model.node(2).unwrap().vector, Some(vec![1.0, 0.0]));
    }

    #[test]
    fn with_no_alive_vector_any_dimension_goes() {
        let mut model = example();
        model.set_vector(2, &[1.0, 0.0]).unwrap();
        model.recall(2, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(model.vector_dimension(), None);
        assert_eq!(model.set_vector(3, &[1.0, 2.0, 3.0]), Ok(()));
        assert_eq!(model.vector_dimension(), Some(3));
    }

    #[test]
    fn a_batch_checks_its_vectors_in_turn_and_their_dimension_last() {
        let mut model = example();
        model.set_vector(1, &[1.0, 0.0]).unwrap();
        let lot = ModelWrite::Lot { label: "l".to_string(), content: b"l".to_vec() };
        let on_new = ModelWrite::Vector { id: 7, vector: vec![0.0, 1.0] };
        assert_eq!(model.clone().batch(&[on_new.clone(), lot.clone()]), Err(Error::UnknownId { id: Id::from(7) }));
        let wide = ModelWrite::Vector { id: 2, vector: vec![1.0, 1.0, 1.0] };
        let bad_memory = ModelWrite::Memory { content: b"m".to_vec(), legs: vec![], reads: vec![] };
        assert_eq!(model.clone().batch(&[wide.clone(), bad_memory]), Err(Error::NoLegs));
        assert_eq!(model.clone().batch(&[lot.clone(), wide]), Err(mismatch(2, 3)));
        assert_eq!(model.batch(&[lot, on_new]), Ok(vec![7]));
        assert_eq!(model.node(7).unwrap().vector, Some(vec![0.0, 1.0]));
    }

    #[test]
    fn searches_find_only_alive_nodes() {
        let mut model = AgentModel::default();
        model.add_lot("l", b"Cheese and BREAD");
        model.add_lot("l", b"bread only");
        model.add_lot("l", b"wine");
        model.set_vector(1, &[1.0, 0.0]).unwrap();
        model.set_vector(2, &[1.0, 1.0]).unwrap();
        assert_eq!(model.keyword_hits("bread"), BTreeSet::from([1, 2]));
        assert_eq!(model.keyword_hits("CHEESE wine"), BTreeSet::from([1, 3]));
        assert_eq!(model.keyword_hits(""), BTreeSet::new());
        let hits = model.vector_hits(&[1.0, 0.0]);
        assert_eq!(hits.keys().copied().collect::<Vec<u64>>(), vec![1, 2]);
        assert!((hits[&2] - 0.5f64.sqrt()).abs() < 1e-12);
        model.recall(2, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(model.keyword_hits("bread"), BTreeSet::from([1]));
        assert_eq!(model.vector_hits(&[1.0, 0.0]).keys().copied().collect::<Vec<u64>>(), vec![1]);
    }

    #[test]
    fn erase_and_compaction_take_the_numbers_of_every_vector() {
        let mut model = example();
        model.set_vector(1, &[1.0, 0.0]).unwrap();
        model.set_vector(1, &[0.0, 1.0]).unwrap();
        model.set_vector(2, &[1.0, 1.0]).unwrap();
        model.recall(1, Mode::Fair, Removal::Erase).unwrap();
        model.recall(2, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(model.node(1).unwrap().vectors.len(), 2);
        assert_eq!(model.node(1).unwrap().numbers, Text::Absent);
        assert_eq!(model.node(2).unwrap().numbers, Text::Present);
        model.compact();
        assert_eq!(model.node(2).unwrap().numbers, Text::Absent);
    }

    #[test]
    fn reads_join_every_leg_and_a_recall_of_one_reaches_the_memory() {
        let mut model = AgentModel::default();
        let message = model.add_lot("user_message", b"a");
        let page = model.add_lot("web_page", b"b");
        let memory = model.remember_tracked(b"m", &[vec![message]], &[page]).unwrap();
        assert_eq!(model.node(memory).unwrap().kind, ModelKind::Memory { legs: vec![vec![1, 2]], tracked: vec![2] });
        assert_eq!(model.recall(page, Mode::Fair, Removal::Untrusted), Ok(vec![memory]));
        assert_eq!(
            model.remember_tracked(b"m", &[vec![message]], &[page]),
            Err(Error::DeadParent { id: Id::from(page) })
        );
        let many: Vec<u64> = (1..=65).collect();
        assert!(matches!(with_reads(&[vec![1]], &many), Err(Error::LimitExceeded { size: 65, limit: 64, .. })));
    }

    #[test]
    fn trust_is_the_best_leg_of_its_worst_parent() {
        let mut model = AgentModel::default();
        let high = model.add_lot("user_message", b"a");
        let low = model.add_lot("web_page", b"b");
        let either = model.remember(b"m", &[vec![high], vec![low]]).unwrap();
        let both = model.remember(b"n", &[vec![high, low]]).unwrap();
        let rules =
            BTreeMap::from([("user_message".to_string(), TrustLevel::High), ("web_page".to_string(), TrustLevel::Low)]);
        use TrustLevel::{High, Low};
        assert_eq!(model.trust_levels(&rules), [High, Low, High, Low]);
        model.recall(high, Mode::Fair, Removal::Untrusted).unwrap();
        assert!(model.is_alive(either) && !model.is_alive(both));
        assert_eq!(model.trust_levels(&rules), [High, Low, Low, Low], "a recalled memory keeps all its legs");
    }
}
