//! What one client was told, and the checks of it: on every read while the run goes on, and
//! against the store once it is over.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb::{Agent, Error, Id, NodeKind};

use super::operations::Read;

/// A write as acknowledged.
#[derive(Debug, Clone)]
pub struct Write {
    /// Its text.
    pub content: String,
    /// A lot or a memory, and how it was made.
    pub kind: WriteKind,
}

/// How a write was made.
#[derive(Debug, Clone)]
pub enum WriteKind {
    /// A lot with this label.
    Lot {
        /// Its label.
        label: String,
    },
    /// A memory on these legs, with these parents added by read tracking.
    Memory {
        /// The legs declared.
        legs: Vec<Vec<u64>>,
        /// What read tracking added, as the client was told.
        tracked: Vec<u64>,
    },
}

/// How many operations of each kind a client tried, and what came of them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Operations tried.
    pub operations: u64,
    /// Writes acknowledged (lots and memories).
    pub acknowledged_writes: u64,
    /// Recalls acknowledged.
    pub acknowledged_recalls: u64,
    /// Reads answered.
    pub reads: u64,
    /// Operations refused or of unknown outcome.
    pub not_acknowledged: u64,
}

impl Counts {
    /// The sum of two counts.
    pub fn plus(self, other: Counts) -> Counts {
        Counts {
            operations: self.operations + other.operations,
            acknowledged_writes: self.acknowledged_writes + other.acknowledged_writes,
            acknowledged_recalls: self.acknowledged_recalls + other.acknowledged_recalls,
            reads: self.reads + other.reads,
            not_acknowledged: self.not_acknowledged + other.not_acknowledged,
        }
    }

    /// Operations acknowledged or answered so far.
    pub fn acknowledged(&self) -> u64 {
        self.acknowledged_writes + self.acknowledged_recalls + self.reads
    }
}

/// Everything one client was told.
#[derive(Debug)]
pub struct Ledger {
    /// The client's name, for messages.
    pub client: String,
    /// The agent it works on.
    pub agent: usize,
    /// Its acknowledged writes by id.
    pub writes: BTreeMap<u64, Write>,
    /// The same ids in the order they were acknowledged.
    pub order: Vec<u64>,
    /// What acknowledged recalls removed, their targets included.
    pub removed: BTreeSet<u64>,
    /// The targets of recalls whose outcome is unknown: they and what rests on them may be gone.
    pub uncertain_recalls: BTreeSet<u64>,
    /// The operations tried.
    pub counts: Counts,
}

impl Ledger {
    /// An empty ledger.
    pub fn new(client: String, agent: usize) -> Ledger {
        Ledger {
            client,
            agent,
            writes: BTreeMap::new(),
            order: Vec::new(),
            removed: BTreeSet::new(),
            uncertain_recalls: BTreeSet::new(),
            counts: Counts::default(),
        }
    }

    /// Notes an acknowledged write; an id acknowledged before fails the test.
    pub fn acknowledge(&mut self, id: u64, write: Write) {
        self.counts.acknowledged_writes += 1;
        let earlier = self.writes.insert(id, write);
        assert!(earlier.is_none(), "{}: id {id} acknowledged twice", self.client);
        self.order.push(id);
    }

    /// Whether `id` is known to be alive as far as this client can tell.
    pub fn believed_alive(&self, id: u64) -> bool {
        self.writes.contains_key(&id) && !self.removed.contains(&id)
    }

    /// Checks a read of `id` against what was acknowledged: the same text while alive, and
    /// dead only when a recall of this client can explain it (no other client builds on or
    /// recalls this client's ids).
    pub fn check_read(&self, id: u64, read: &Read) {
        let Some(write) = self.writes.get(&id) else { return };
        if read.alive {
            assert!(!self.removed.contains(&id), "{}: id {id} is alive after a recall removed it", self.client);
            assert_eq!(read.content.as_deref(), Some(write.content.as_str()), "{}: id {id}", self.client);
        } else {
            assert!(
                self.removed.contains(&id) || !self.uncertain_recalls.is_empty(),
                "{}: id {id} is dead though no recall of this client removed it",
                self.client
            );
        }
    }
}

/// What the final check found in one agent.
#[derive(Debug, Default)]
pub struct Checked {
    /// Acknowledged writes found with their content.
    pub present: u64,
    /// Acknowledged writes found dead, as acknowledged recalls said.
    pub recalled: u64,
    /// Acknowledged writes found dead through a recall of unknown outcome.
    pub uncertain: u64,
}

/// Checks `agent`, reopened after the run, against the ledgers of the clients that worked on
/// it: no id acknowledged twice, every acknowledged write present with its exact content and
/// how it was made, dead only where a recall explains it, and the agent's chains verified.
pub fn check_agent(agent: &Agent, ledgers: &[&Ledger]) -> Checked {
    let mut owner = BTreeMap::new();
    for ledger in ledgers {
        for id in ledger.writes.keys() {
            if let Some(other) = owner.insert(*id, &ledger.client) {
                panic!("id {id} acknowledged to {other} and to {}", ledger.client);
            }
        }
    }
    let mut checked = Checked::default();
    for ledger in ledgers {
        for (id, write) in &ledger.writes {
            check_write(agent, ledger, *id, write, &mut checked);
        }
    }
    agent.verify().unwrap_or_else(|error| panic!("agent {}: verify failed: {error}", ledgers[0].agent));
    checked
}

fn check_write(agent: &Agent, ledger: &Ledger, id: u64, write: &Write, checked: &mut Checked) {
    let client = &ledger.client;
    let node = match agent.audit(Id::from(id)) {
        Ok(node) => node,
        Err(Error::UnknownId { .. }) => panic!("{client}: acknowledged id {id} was lost"),
        Err(error) => panic!("{client}: id {id}: {error}"),
    };
    if let Some(content) = node.content() {
        assert_eq!(content, write.content.as_bytes(), "{client}: content of id {id}");
    }
    check_kind(&node.kind, node.tracked_parents(), write, client, id);
    if ledger.removed.contains(&id) {
        assert!(!node.is_alive(), "{client}: id {id} alive though an acknowledged recall removed it");
        checked.recalled += 1;
    } else if node.is_alive() {
        assert!(node.content().is_some(), "{client}: id {id} is alive without its content");
        checked.present += 1;
    } else {
        assert!(
            rests_on_any(agent, id, &ledger.uncertain_recalls),
            "{client}: id {id} is dead though no recall of this client explains it"
        );
        checked.uncertain += 1;
    }
}

/// Checks the node is the lot or memory that was written: the label, and every declared leg
/// within a leg of the node with what tracking added.
fn check_kind(kind: &NodeKind, tracked_parents: &[Id], write: &Write, client: &str, id: u64) {
    match (kind, &write.kind) {
        (NodeKind::Lot { label }, WriteKind::Lot { label: expected }) => {
            assert_eq!(label, expected, "{client}: label of id {id}");
        }
        (NodeKind::Memory { legs }, WriteKind::Memory { legs: declared, tracked }) => {
            let stored: Vec<BTreeSet<u64>> =
                legs.iter().map(|leg| leg.parents().iter().map(|parent| parent.get()).collect()).collect();
            assert_eq!(stored.len(), declared.len(), "{client}: legs of id {id}");
            for leg in declared {
                assert!(
                    stored.iter().any(|stored_leg| leg.iter().all(|parent| stored_leg.contains(parent))),
                    "{client}: id {id} lost its leg {leg:?}: {stored:?}"
                );
            }
            let declared_everywhere = |parent: &u64| declared.iter().all(|leg| leg.contains(parent));
            let stored_tracked: BTreeSet<u64> = tracked_parents
                .iter()
                .map(|parent| parent.get())
                .filter(|parent| !declared_everywhere(parent))
                .collect();
            let told: BTreeSet<u64> = tracked.iter().copied().collect();
            assert_eq!(stored_tracked, told, "{client}: tracked parents of id {id}");
        }
        (stored, _) => panic!("{client}: id {id} is stored as {stored:?}, not as written"),
    }
}

/// Whether `id` is one of `targets` or rests, through its parents, on one of them.
fn rests_on_any(agent: &Agent, id: u64, targets: &BTreeSet<u64>) -> bool {
    let mut pending = vec![id];
    let mut seen = BTreeSet::new();
    while let Some(current) = pending.pop() {
        if targets.contains(&current) {
            return true;
        }
        if !seen.insert(current) {
            continue;
        }
        if let Ok(node) = agent.audit(Id::from(current)) {
            if let NodeKind::Memory { legs } = &node.kind {
                pending.extend(legs.iter().flat_map(|leg| leg.parents().iter().map(|parent| parent.get())));
            }
        }
    }
    false
}
