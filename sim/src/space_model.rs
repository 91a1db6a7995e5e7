//! The reference model of shared spaces: what a store of agents and spaces promises, written as
//! plainly as [`crate::model`] writes one agent, so that the engine's spaces are checked against
//! it as its agents are.
//!
//! Every lot and memory of every agent and every space is one node of one graph, keyed by the
//! log it belongs to and its id there. A recall is the recall of one agent over that graph:
//! Fair is a fixpoint over every memory of every log, Strict walks every memory's history, so a
//! memory of a member that names a space's node dies with it exactly as if both were one agent's.
//! Who may do what is checked first, from the members and roles of the space, before anything
//! changes. Slow and obvious on purpose.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::{Mode, Removal};

use crate::model::Text;

/// What a member of a space may do, each role allowing what the one before it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Get, list, search, audit and verify the space, and name its nodes as parents.
    Read,
    /// Also add lots and memories to the space.
    Write,
    /// Also recall in the space, and grant and revoke roles.
    Admin,
}

/// The log a node belongs to: an agent's private memory or a space.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Log {
    /// The agent of this name.
    Agent(String),
    /// The space of this name.
    Space(String),
}

/// A node: its log and its id there (ids count from 1 in each log).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeKey {
    /// Where the node is.
    pub log: Log,
    /// Its id in that log.
    pub id: u64,
}

/// Why the model refuses a call. The engine answers each with a typed error of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No such agent.
    UnknownAgent,
    /// A space name that is empty, too long, or holds `:` or `,` (which a leg's text form uses).
    InvalidSpaceName,
    /// A space of that name exists already.
    SpaceExists,
    /// The acting agent reaches no space of that name: it does not exist, or the agent is not
    /// (or no longer) a member. The three are one answer, so a name tells nothing.
    UnknownSpace,
    /// The member's role allows less than the call needs.
    RoleTooLow {
        /// The role the call needs.
        needed: Role,
    },
    /// The agent to revoke is not a member.
    NotAMember,
    /// Revoking this member would leave the space without an admin.
    LastAdmin,
    /// A memory without a leg, or with an empty leg.
    NoLegs,
    /// A parent that is unknown or dead, or that the writer may not name: a space's memory names
    /// only nodes of its own space, an agent's names its own and those of spaces it reads.
    BadParent,
    /// An unknown id in the log, or one already recalled (with Untrusted).
    UnknownOrDeadId,
}

/// One lot or memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedNode {
    /// The content written.
    pub content: Vec<u8>,
    /// The legs of a memory (empty for a lot), each parent's log and id.
    pub legs: Vec<Vec<NodeKey>>,
    /// The agent that wrote it: the owner in an agent's log, the member in a space.
    pub author: String,
    /// Not recalled.
    pub alive: bool,
    /// Where its text is.
    pub text: Text,
}

/// A space: its members and their roles, and who wrote each record of its log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpaceMembers {
    /// The members now, with their roles.
    pub roles: BTreeMap<String, Role>,
    /// Every change of membership, in order: who granted or revoked, whom, and the role given
    /// (`None` for a revoke). The first is the first admin's, made by the store.
    pub changes: Vec<(String, String, Option<Role>)>,
}

/// Agents and spaces of one store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreModel {
    /// The names of the agents.
    pub agents: BTreeSet<String>,
    /// The members of each space, by the space's name.
    pub spaces: BTreeMap<String, SpaceMembers>,
    /// Every node of every log.
    pub nodes: BTreeMap<NodeKey, SharedNode>,
}

/// The longest space name, as the longest agent name.
const SPACE_NAME_MAX_BYTES: usize = 256;

impl StoreModel {
    /// Adds an agent.
    pub fn add_agent(&mut self, name: &str) {
        self.agents.insert(name.to_string());
    }

    /// Makes a space with `first_admin` as its one member.
    pub fn create_space(&mut self, name: &str, first_admin: &str) -> Result<(), Refusal> {
        if name.is_empty() || name.len() > SPACE_NAME_MAX_BYTES || name.contains([':', ',']) {
            return Err(Refusal::InvalidSpaceName);
        }
        if !self.agents.contains(first_admin) {
            return Err(Refusal::UnknownAgent);
        }
        if self.spaces.contains_key(name) {
            return Err(Refusal::SpaceExists);
        }
        let members = SpaceMembers {
            roles: BTreeMap::from([(first_admin.to_string(), Role::Admin)]),
            changes: vec![(first_admin.to_string(), first_admin.to_string(), Some(Role::Admin))],
        };
        self.spaces.insert(name.to_string(), members);
        Ok(())
    }

    /// The role of `agent` in `space`, if it reaches the space at all.
    pub fn role(&self, agent: &str, space: &str) -> Option<Role> {
        self.spaces.get(space)?.roles.get(agent).copied()
    }

    /// Refuses unless `agent` is a member of `space` with at least `needed`.
    fn check_role(&self, agent: &str, space: &str, needed: Role) -> Result<(), Refusal> {
        match self.role(agent, space) {
            None => Err(Refusal::UnknownSpace),
            Some(role) if role < needed => Err(Refusal::RoleTooLow { needed }),
            Some(_) => Ok(()),
        }
    }

    /// Refuses unless `agent` may do in `log` what `needed` allows: in its own log anything, in
    /// another agent's nothing, in a space what its role allows.
    fn check_access(&self, agent: &str, log: &Log, needed: Role) -> Result<(), Refusal> {
        match log {
            Log::Agent(owner) if owner == agent && self.agents.contains(agent) => Ok(()),
            Log::Agent(_) => Err(Refusal::UnknownAgent),
            Log::Space(space) => self.check_role(agent, space, needed),
        }
    }

    /// `admin` gives `member` the role `role` in `space` (a member already has it replaced).
    pub fn grant(&mut self, admin: &str, space: &str, member: &str, role: Role) -> Result<(), Refusal> {
        self.check_role(admin, space, Role::Admin)?;
        if !self.agents.contains(member) {
            return Err(Refusal::UnknownAgent);
        }
        let members = self.spaces.get_mut(space).ok_or(Refusal::UnknownSpace)?;
        if member == admin && role != Role::Admin && admins(members) == 1 {
            return Err(Refusal::LastAdmin);
        }
        members.roles.insert(member.to_string(), role);
        members.changes.push((admin.to_string(), member.to_string(), Some(role)));
        Ok(())
    }

    /// `admin` takes `member` out of `space`. What the member built on the space stays as it is.
    pub fn revoke(&mut self, admin: &str, space: &str, member: &str) -> Result<(), Refusal> {
        self.check_role(admin, space, Role::Admin)?;
        let members = self.spaces.get_mut(space).ok_or(Refusal::UnknownSpace)?;
        let Some(role) = members.roles.get(member).copied() else { return Err(Refusal::NotAMember) };
        if role == Role::Admin && admins(members) == 1 {
            return Err(Refusal::LastAdmin);
        }
        members.roles.remove(member);
        members.changes.push((admin.to_string(), member.to_string(), None));
        Ok(())
    }

    /// The id the next node of `log` gets.
    pub fn next_id(&self, log: &Log) -> u64 {
        self.nodes.keys().filter(|key| key.log == *log).count() as u64 + 1
    }

    /// Whether `key` names a node that is alive.
    pub fn is_alive(&self, key: &NodeKey) -> bool {
        self.nodes.get(key).is_some_and(|node| node.alive)
    }

    /// `agent` adds a lot to `log`; returns its key.
    pub fn add_lot(&mut self, agent: &str, log: &Log, content: &[u8]) -> Result<NodeKey, Refusal> {
        self.check_access(agent, log, Role::Write)?;
        Ok(self.insert(agent, log, content, Vec::new()))
    }

    /// `agent` adds a memory to `log` on `legs`; returns its key.
    pub fn remember(
        &mut self,
        agent: &str,
        log: &Log,
        content: &[u8],
        legs: &[Vec<NodeKey>],
    ) -> Result<NodeKey, Refusal> {
        self.check_access(agent, log, Role::Write)?;
        if legs.is_empty() || legs.iter().any(Vec::is_empty) {
            return Err(Refusal::NoLegs);
        }
        let nameable = |parent: &NodeKey| match (log, &parent.log) {
            (Log::Space(space), Log::Space(parent_space)) => space == parent_space,
            (Log::Space(_), Log::Agent(_)) => false,
            (Log::Agent(owner), Log::Agent(parent_owner)) => owner == parent_owner,
            (Log::Agent(_), Log::Space(parent_space)) => self.role(agent, parent_space).is_some(),
        };
        if !legs.iter().flatten().all(|parent| nameable(parent) && self.is_alive(parent)) {
            return Err(Refusal::BadParent);
        }
        Ok(self.insert(agent, log, content, legs.to_vec()))
    }

    fn insert(&mut self, author: &str, log: &Log, content: &[u8], legs: Vec<Vec<NodeKey>>) -> NodeKey {
        let key = NodeKey { log: log.clone(), id: self.next_id(log) };
        let node = SharedNode {
            content: content.to_vec(),
            legs,
            author: author.to_string(),
            alive: true,
            text: Text::Present,
        };
        self.nodes.insert(key.clone(), node);
        key
    }

    /// The node `key` as `agent` reads it: from its own log or a space it reads, never from
    /// another agent's private memory, whatever the key says.
    pub fn get(&self, agent: &str, key: &NodeKey) -> Result<&SharedNode, Refusal> {
        self.check_access(agent, &key.log, Role::Read)?;
        self.nodes.get(key).ok_or(Refusal::UnknownOrDeadId)
    }

    /// The alive nodes of `log`, ascending, as `agent` lists them.
    pub fn list(&self, agent: &str, log: &Log) -> Result<Vec<u64>, Refusal> {
        self.check_access(agent, log, Role::Read)?;
        Ok(self.nodes.iter().filter(|(key, node)| key.log == *log && node.alive).map(|(key, _)| key.id).collect())
    }

    /// The nodes of `space` that `member` wrote, for the recall of what a compromised agent put
    /// there; `agent` must read the space.
    pub fn written_by(&self, agent: &str, space: &str, member: &str) -> Result<Vec<u64>, Refusal> {
        self.check_role(agent, space, Role::Read)?;
        let log = Log::Space(space.to_string());
        Ok(self
            .nodes
            .iter()
            .filter(|(key, node)| key.log == log && node.author == member)
            .map(|(key, _)| key.id)
            .collect())
    }

    /// Whether `ancestor` is anywhere in the history of `key`, through any log.
    pub fn has_in_history(&self, key: &NodeKey, ancestor: &NodeKey) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![key.clone()];
        while let Some(node) = stack.pop() {
            for parent in self.nodes.get(&node).map(|node| node.legs.iter().flatten()).into_iter().flatten() {
                if parent == ancestor {
                    return true;
                }
                if seen.insert(parent.clone()) {
                    stack.push(parent.clone());
                }
            }
        }
        false
    }

    /// What recalling `target` removes besides it, in every log, ascending by log and id.
    fn plan(&self, target: &NodeKey, mode: Mode) -> Vec<NodeKey> {
        let memories: Vec<&NodeKey> =
            self.nodes.iter().filter(|(_, node)| node.alive && !node.legs.is_empty()).map(|(key, _)| key).collect();
        match mode {
            Mode::Strict => {
                memories.into_iter().filter(|memory| self.has_in_history(memory, target)).cloned().collect()
            }
            Mode::Fair => {
                let mut dead: BTreeSet<NodeKey> = BTreeSet::from([target.clone()]);
                loop {
                    let holds =
                        |leg: &Vec<NodeKey>| leg.iter().all(|parent| self.is_alive(parent) && !dead.contains(parent));
                    let newly: Vec<NodeKey> = memories
                        .iter()
                        .filter(|memory| !dead.contains(**memory))
                        .filter(|memory| !self.nodes.get(**memory).is_some_and(|node| node.legs.iter().any(holds)))
                        .map(|memory| (*memory).clone())
                        .collect();
                    if newly.is_empty() {
                        break;
                    }
                    dead.extend(newly);
                }
                dead.remove(target);
                dead.into_iter().collect()
            }
        }
    }

    /// What `agent`'s recall of `target` would remove, grouped by log, writing nothing.
    pub fn preview_recall(
        &self,
        agent: &str,
        target: &NodeKey,
        mode: Mode,
    ) -> Result<BTreeMap<Log, Vec<u64>>, Refusal> {
        self.check_access(agent, &target.log, Role::Admin)?;
        if !self.is_alive(target) {
            return Err(Refusal::UnknownOrDeadId);
        }
        let mut grouped: BTreeMap<Log, Vec<u64>> = BTreeMap::new();
        for removed in self.plan(target, mode) {
            grouped.entry(removed.log).or_default().push(removed.id);
        }
        Ok(grouped)
    }

    /// `agent` recalls `target`: it and what depends on it die in every log, members' private
    /// memories among them; with Erase their text is gone from every log's files.
    pub fn recall(
        &mut self,
        agent: &str,
        target: &NodeKey,
        mode: Mode,
        removal: Removal,
    ) -> Result<BTreeMap<Log, Vec<u64>>, Refusal> {
        let removed = self.preview_recall(agent, target, mode)?;
        let dead = removed.iter().flat_map(|(log, ids)| ids.iter().map(|id| NodeKey { log: log.clone(), id: *id }));
        for key in dead.chain([target.clone()]).collect::<Vec<_>>() {
            if let Some(node) = self.nodes.get_mut(&key) {
                node.alive = false;
                if removal == Removal::Erase {
                    node.text = Text::Absent;
                }
            }
        }
        Ok(removed)
    }
}

/// How many admins a space has.
fn admins(members: &SpaceMembers) -> usize {
    members.roles.values().filter(|role| **role == Role::Admin).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(name: &str) -> Log {
        Log::Space(name.to_string())
    }

    fn agent(name: &str) -> Log {
        Log::Agent(name.to_string())
    }

    /// alice admins "team", bob writes to it, carol reads it; dave is outside.
    fn team() -> StoreModel {
        let mut store = StoreModel::default();
        for name in ["alice", "bob", "carol", "dave"] {
            store.add_agent(name);
        }
        store.create_space("team", "alice").unwrap();
        store.grant("alice", "team", "bob", Role::Write).unwrap();
        store.grant("alice", "team", "carol", Role::Read).unwrap();
        store
    }

    #[test]
    fn a_poisoned_shared_lot_takes_every_member_s_memory_built_on_it() {
        let mut store = team();
        let (team_log, bob_log, carol_log) = (space("team"), agent("bob"), agent("carol"));
        let poisoned = store.add_lot("bob", &team_log, b"the API key is 1234").unwrap();
        let honest = store.add_lot("alice", &team_log, b"deploys are on Fridays").unwrap();
        let shared = store.remember("bob", &team_log, b"deploy with key 1234", &[vec![poisoned.clone()]]).unwrap();
        let bob_own = store.add_lot("bob", &bob_log, b"my notes").unwrap();
        let bob_memory =
            store.remember("bob", &bob_log, b"use 1234 on Friday", &[vec![shared.clone(), bob_own.clone()]]).unwrap();
        let carol_either = store
            .remember("carol", &carol_log, b"Friday deploys", &[vec![honest.clone()], vec![poisoned.clone()]])
            .unwrap();
        let carol_strict_only = store.remember("carol", &carol_log, b"key 1234", &[vec![poisoned.clone()]]).unwrap();

        let preview = store.preview_recall("alice", &poisoned, Mode::Fair).unwrap();
        let expected = BTreeMap::from([
            (bob_log.clone(), vec![bob_memory.id]),
            (carol_log.clone(), vec![carol_strict_only.id]),
            (team_log.clone(), vec![shared.id]),
        ]);
        assert_eq!(preview, expected, "Fair keeps carol's memory that has a leg on an honest lot");
        let strict = store.preview_recall("alice", &poisoned, Mode::Strict).unwrap();
        assert_eq!(strict.get(&carol_log), Some(&vec![carol_either.id, carol_strict_only.id]));

        assert_eq!(store.recall("alice", &poisoned, Mode::Fair, Removal::Erase).unwrap(), expected);
        for gone in [&poisoned, &shared, &bob_memory, &carol_strict_only] {
            let node = &store.nodes[gone];
            assert!(!node.alive && node.text == Text::Absent, "{gone:?}");
        }
        for kept in [&honest, &bob_own, &carol_either] {
            assert!(store.nodes[kept].alive && store.nodes[kept].text == Text::Present, "{kept:?}");
        }
    }

    #[test]
    fn roles_limit_each_call_and_outsiders_get_one_answer() {
        let mut store = team();
        let team_log = space("team");
        let lot = store.add_lot("bob", &team_log, b"shared").unwrap();
        assert_eq!(store.add_lot("carol", &team_log, b"x"), Err(Refusal::RoleTooLow { needed: Role::Write }));
        assert_eq!(
            store.recall("bob", &lot, Mode::Fair, Removal::Untrusted),
            Err(Refusal::RoleTooLow { needed: Role::Admin })
        );
        assert_eq!(store.grant("bob", "team", "dave", Role::Read), Err(Refusal::RoleTooLow { needed: Role::Admin }));
        // An outsider, a wrong name and a revoked member hear the same.
        assert_eq!(store.add_lot("dave", &team_log, b"x"), Err(Refusal::UnknownSpace));
        assert_eq!(store.add_lot("bob", &space("teem"), b"x"), Err(Refusal::UnknownSpace));
        store.revoke("alice", "team", "bob").unwrap();
        assert_eq!(store.add_lot("bob", &team_log, b"x"), Err(Refusal::UnknownSpace));
        assert_eq!(store.written_by("bob", "team", "bob"), Err(Refusal::UnknownSpace));
        assert_eq!(store.written_by("alice", "team", "bob"), Ok(vec![lot.id]));
    }

    #[test]
    fn a_member_reads_its_own_memory_and_its_spaces_and_nothing_of_another_member() {
        let mut store = team();
        let (team_log, bob_log) = (space("team"), agent("bob"));
        let shared = store.add_lot("bob", &team_log, b"shared").unwrap();
        let private = store.add_lot("bob", &bob_log, b"bob's own").unwrap();
        assert_eq!(store.get("carol", &shared).map(|node| node.author.as_str()), Ok("bob"));
        assert_eq!(store.get("carol", &private).err(), Some(Refusal::UnknownAgent));
        assert_eq!(store.list("carol", &bob_log), Err(Refusal::UnknownAgent));
        assert_eq!(store.get("dave", &shared).err(), Some(Refusal::UnknownSpace));
        assert_eq!(store.list("carol", &team_log), Ok(vec![shared.id]));
        assert_eq!(store.list("bob", &bob_log), Ok(vec![private.id]));
        store.recall("alice", &shared, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(store.list("carol", &team_log), Ok(vec![]));
        assert!(store.get("carol", &shared).is_ok_and(|node| !node.alive), "a dead node is still got, as dead");
    }

    #[test]
    fn parents_cross_only_from_a_member_s_own_memory_into_a_space_it_reads() {
        let mut store = team();
        let (team_log, alice_log, dave_log) = (space("team"), agent("alice"), agent("dave"));
        let shared = store.add_lot("alice", &team_log, b"shared").unwrap();
        let private = store.add_lot("alice", &alice_log, b"private").unwrap();
        assert_eq!(store.remember("alice", &team_log, b"leak", &[vec![private.clone()]]), Err(Refusal::BadParent));
        assert_eq!(store.remember("dave", &dave_log, b"peek", &[vec![shared.clone()]]), Err(Refusal::BadParent));
        assert_eq!(store.remember("alice", &alice_log, b"nothing", &[]), Err(Refusal::NoLegs));
        let built = store.remember("alice", &alice_log, b"both", &[vec![shared.clone(), private.clone()]]);
        assert_eq!(built.map(|key| key.id), Ok(2));
        let other = store.create_space("other", "dave");
        assert_eq!(other, Ok(()));
        let elsewhere = store.add_lot("dave", &space("other"), b"elsewhere").unwrap();
        assert_eq!(store.remember("dave", &space("other"), b"cross", &[vec![shared]]), Err(Refusal::BadParent));
        assert_eq!(store.remember("alice", &alice_log, b"not hers", &[vec![elsewhere]]), Err(Refusal::BadParent));
    }

    #[test]
    fn a_revoked_member_s_memories_still_die_with_the_shared_node() {
        let mut store = team();
        let (team_log, carol_log) = (space("team"), agent("carol"));
        let shared = store.add_lot("alice", &team_log, b"shared").unwrap();
        let built = store.remember("carol", &carol_log, b"built", &[vec![shared.clone()]]).unwrap();
        store.revoke("alice", "team", "carol").unwrap();
        assert_eq!(store.remember("carol", &carol_log, b"again", &[vec![shared.clone()]]), Err(Refusal::BadParent));
        let removed = store.recall("alice", &shared, Mode::Strict, Removal::Untrusted).unwrap();
        assert_eq!(removed, BTreeMap::from([(carol_log, vec![built.id])]));
        assert_eq!(store.nodes[&built].text, Text::Present, "Untrusted hides, leaving the text");
        assert_eq!(store.recall("alice", &shared, Mode::Fair, Removal::Untrusted), Err(Refusal::UnknownOrDeadId));
    }

    /// One log alone is one agent: on random graphs and recalls, the model of spaces removes
    /// what the model of one agent removes, whether the log is a space or an agent's.
    #[test]
    fn one_log_alone_recalls_as_the_model_of_one_agent() {
        use crate::model::AgentModel;
        use crate::random::Random;
        for seed in 0..300 {
            let mut random = Random::seeded(seed);
            let mut store = team();
            let log = if seed % 2 == 0 { space("team") } else { agent("alice") };
            let mut single = AgentModel::new(false);
            for step in 0..40u64 {
                let next = single.next_id();
                let alive: Vec<u64> = single.ids().filter(|id| single.is_alive(*id)).collect();
                if alive.is_empty() || random.chance(0.3) {
                    single.add_lot("source", b"lot");
                    assert_eq!(store.add_lot("alice", &log, b"lot").map(|key| key.id), Ok(next));
                } else if random.chance(0.8) {
                    let legs: Vec<Vec<u64>> = (0..=random.below(2))
                        .map(|_| {
                            let parents: BTreeSet<u64> =
                                (0..=random.below(2)).filter_map(|_| random.pick(&alive).copied()).collect();
                            parents.into_iter().collect()
                        })
                        .collect();
                    let keyed: Vec<Vec<NodeKey>> = legs
                        .iter()
                        .map(|leg| leg.iter().map(|id| NodeKey { log: log.clone(), id: *id }).collect())
                        .collect();
                    single.remember(b"memory", &legs).unwrap();
                    assert_eq!(store.remember("alice", &log, b"memory", &keyed).map(|key| key.id), Ok(next));
                } else {
                    let Some(target) = random.pick(&alive).copied() else { continue };
                    let mode = if random.chance(0.5) { Mode::Fair } else { Mode::Strict };
                    let removed = single.recall(target, mode, Removal::Untrusted).unwrap();
                    let shared =
                        store.recall("alice", &NodeKey { log: log.clone(), id: target }, mode, Removal::Untrusted);
                    let shared = shared.unwrap().remove(&log).unwrap_or_default();
                    assert_eq!(shared, removed, "seed {seed}, step {step}");
                }
            }
        }
    }

    #[test]
    fn membership_keeps_an_admin_and_every_change_in_order() {
        let mut store = team();
        assert_eq!(store.revoke("alice", "team", "alice"), Err(Refusal::LastAdmin));
        assert_eq!(store.grant("alice", "team", "alice", Role::Read), Err(Refusal::LastAdmin));
        assert_eq!(store.revoke("alice", "team", "dave"), Err(Refusal::NotAMember));
        store.grant("alice", "team", "bob", Role::Admin).unwrap();
        store.revoke("bob", "team", "alice").unwrap();
        let changes: Vec<(&str, &str, Option<Role>)> =
            store.spaces["team"].changes.iter().map(|(by, whom, role)| (by.as_str(), whom.as_str(), *role)).collect();
        assert_eq!(
            changes,
            [
                ("alice", "alice", Some(Role::Admin)),
                ("alice", "bob", Some(Role::Write)),
                ("alice", "carol", Some(Role::Read)),
                ("alice", "bob", Some(Role::Admin)),
                ("bob", "alice", None),
            ]
        );
        let long = "x".repeat(257);
        for name in ["", "a:b", "a,b", long.as_str()] {
            assert_eq!(store.create_space(name, "bob"), Err(Refusal::InvalidSpaceName), "{name:?}");
        }
        assert_eq!(store.create_space("team", "bob"), Err(Refusal::SpaceExists));
        assert_eq!(store.create_space("new", "nobody"), Err(Refusal::UnknownAgent));
    }
}
