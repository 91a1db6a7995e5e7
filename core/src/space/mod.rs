//! Spaces: logs that several agents of one store share, each member with a role.
//!
//! A space's log is an agent's log in format (its own folder, segments and chain), in which
//! every change names the member that wrote it and member records grant and revoke roles. The
//! role is checked on every call against the ledger the log replays to, so a revoke takes effect
//! for handles already open, and a log whose history breaks the roles fails to open.

mod group_write;

use alloc::string::String;
use alloc::vec::Vec;

use crate::agent_key::AgentKey;
use crate::engine::space_ledger::{RecalledNodes, SpaceLedger};
use crate::engine::AgentEngine;
use crate::error::Error;
use crate::error_facts::Limit;
use crate::id::{Id, Leg, Mode, Removal};
use crate::limits::{self, Options, MEMBERS_PER_SPACE_MAX};
use crate::node::Node;

use crate::role::Role;
use crate::search::Hit;
use crate::storage::Storage;
use crate::Fingerprint;
pub use group_write::SpaceWrite;

/// What a space's engine answers with in the one state that cannot happen: no ledger.
static NO_LEDGER: SpaceLedger = SpaceLedger::EMPTY;

/// An agent of the store that a role may be granted to, made only by
/// [`StoreEngine::grantee`](crate::StoreEngine::grantee): a number no agent holds yet could
/// otherwise be granted a role that a later agent would be born with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grantee {
    number: u64,
}

impl Grantee {
    /// The grantee of agent `number`, which the catalog lists.
    pub(crate) fn new(number: u64) -> Grantee {
        Grantee { number }
    }

    /// The agent's number.
    #[must_use]
    pub fn number(self) -> u64 {
        self.number
    }
}

/// One space's log and its members, reached through a member's key on every call.
///
/// ```
/// use cheesedb_core::{ram_storage::RamStorage, Error, Leg, Options, Role, StoreEngine};
///
/// let mut store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
/// let alice = store.create_agent("alice").unwrap();
/// let bob = store.create_agent("bob").unwrap();
/// let (alice, bob) = (store.authenticate(&alice).unwrap(), store.authenticate(&bob).unwrap());
/// let mut team = store.create_space("team", alice).unwrap();
/// team.grant(&alice, store.grantee("bob").unwrap(), Role::Read).unwrap();
/// let lot = team.add_lot(&alice, "wiki", b"the build runs on two cores").unwrap();
/// assert_eq!(team.author_of(&bob, lot), Ok(alice.number()));
/// assert_eq!(team.add_lot(&bob, "wiki", b"no"), Err(Error::RoleTooLow { held: Role::Read, needed: Role::Write }));
/// ```
#[derive(Debug)]
pub struct SpaceEngine<S: Storage> {
    log: AgentEngine<S>,
    name: String,
}

/// The recalls of one space, as [`SpaceEngine::recalls`] gives them to apply to its members:
/// a copy, a byte a node of the space.
#[derive(Debug, Clone)]
pub struct SpaceRecalls {
    number: u64,
    recalled: RecalledNodes,
}

impl SpaceRecalls {
    /// As [`SpaceEngine::apply_recalls_to`].
    ///
    /// # Errors
    ///
    /// Those of [`AgentEngine::recall`].
    pub fn apply_to<S: Storage>(&self, agent: &mut AgentEngine<S>) -> Result<Vec<Id>, Error> {
        agent.apply_space_recalls(self.number, &self.recalled)
    }
}

impl<S: Storage> SpaceEngine<S> {
    /// Makes the folder and log of a new space numbered `number`, whose first record makes
    /// `first_admin` its admin, durably.
    pub(crate) fn create(
        storage: S,
        number: u64,
        options: Options,
        name: &str,
        first_admin: u64,
    ) -> Result<SpaceEngine<S>, Error> {
        let log = AgentEngine::create_space(storage, number, options, first_admin)?;
        Ok(SpaceEngine { log, name: String::from(name) })
    }

    /// Opens the space numbered `number`, replaying its members and authors.
    pub(crate) fn open(storage: S, number: u64, options: Options, name: &str) -> Result<SpaceEngine<S>, Error> {
        let log = AgentEngine::open_space(storage, number, options)?;
        Ok(SpaceEngine { log, name: String::from(name) })
    }

    /// The space's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times the space's log changed bytes already written (an Erase, a compaction):
    /// a replica must then take those stretches again.
    #[must_use]
    pub fn rewrite_count(&self) -> u64 {
        self.log.rewrite_count()
    }

    /// The space's number in the store (its folder is named from it).
    #[must_use]
    pub fn number(&self) -> u64 {
        self.log.agent_number()
    }

    /// The role agent `agent` holds now ([`Role::None`] for one that is not a member).
    #[must_use]
    pub fn role_of(&self, agent: u64) -> Role {
        self.ledger().role_of(agent)
    }

    /// Checks that `member` holds at least `needed`: a non-member learns only that no such
    /// space has it as a member, as for a space that does not exist.
    fn require(&self, member: &AgentKey, needed: Role) -> Result<(), Error> {
        match self.role_of(member.number()) {
            Role::None => Err(Error::UnknownSpace { name: self.name.clone() }),
            held if held < needed => Err(Error::RoleTooLow { held, needed }),
            _ => Ok(()),
        }
    }

    fn ledger(&self) -> &SpaceLedger {
        // A space's engine always has its ledger; the empty one only satisfies the type.
        self.log.space_ledger().unwrap_or(&NO_LEDGER)
    }

    /// The members holding a role now, with it, in the order they were first granted one.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` when `member` is not a member.
    pub fn members(&self, member: &AgentKey) -> Result<Vec<(u64, Role)>, Error> {
        self.require(member, Role::Read)?;
        Ok(self.ledger().members().collect())
    }

    /// Gives agent `agent` the role `role`, or changes the role it holds. Needs admin.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`; `Error::LastAdmin` when it would leave no
    /// admin; `Error::LimitExceeded` past [`MEMBERS_PER_SPACE_MAX`]; the write's errors.
    pub fn grant(&mut self, admin: &AgentKey, agent: Grantee, role: Role) -> Result<(), Error> {
        self.set_role(admin, agent.number, role)
    }

    fn set_role(&mut self, admin: &AgentKey, agent: u64, role: Role) -> Result<(), Error> {
        self.require(admin, Role::Admin)?;
        let current = self.role_of(agent);
        if current == role {
            return Ok(());
        }
        if current == Role::None && role != Role::None {
            let members = self.ledger().member_count();
            limits::check(Limit::MembersPerSpace, members + 1, MEMBERS_PER_SPACE_MAX)?;
        }
        if current == Role::Admin && self.admin_count() == 1 {
            return Err(Error::LastAdmin);
        }
        self.log.write_member(admin.number(), agent, role)
    }

    /// Takes away every role agent number `agent` holds (also one since deleted from the
    /// store). What it wrote stays, and names it. Needs admin; revoking an agent that is not a
    /// member changes nothing.
    ///
    /// # Errors
    ///
    /// As [`SpaceEngine::grant`].
    pub fn revoke(&mut self, admin: &AgentKey, agent: u64) -> Result<(), Error> {
        self.set_role(admin, agent, Role::None)
    }

    fn admin_count(&self) -> usize {
        self.ledger().members().filter(|(_, role)| *role == Role::Admin).count()
    }

    /// Adds a source to the space, written by `member`. Needs write.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`, and those of [`AgentEngine::add_lot`].
    pub fn add_lot(&mut self, member: &AgentKey, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.require(member, Role::Write)?;
        self.log.write_as(member.number(), |log| log.add_lot(label, content))
    }

    /// Adds a memory learned through `legs` (ids of this space), written by `member`. Needs
    /// write.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`, and those of [`AgentEngine::remember`].
    pub fn remember(&mut self, member: &AgentKey, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.require(member, Role::Write)?;
        self.log.write_as(member.number(), |log| log.remember(content, legs))
    }

    /// Recalls `id` and what depends on it in the space, as an agent's recall does. Needs
    /// admin. Returns what died in the space; what the members built on it dies as each one
    /// is given [`SpaceEngine::apply_recalls_to`] (every agent of
    /// [`SpaceEngine::everyone_granted`]), which its open must do before its first answer.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`, and those of [`AgentEngine::recall`].
    pub fn recall(&mut self, admin: &AgentKey, id: Id, mode: Mode, removal: Removal) -> Result<Vec<Id>, Error> {
        self.require(admin, Role::Admin)?;
        self.log.write_as(admin.number(), |log| log.recall(id, mode, removal))
    }

    /// What a recall of `id` would remove, without removing it. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::preview_recall`].
    pub fn preview_recall(&self, member: &AgentKey, id: Id, mode: Mode) -> Result<Vec<Id>, Error> {
        self.require(member, Role::Read)?;
        self.log.preview_recall(id, mode)
    }

    /// What the memory of `agent` would lose to a recall of `id` in the space, without
    /// removing anything: its memories built on the nodes that would die. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::preview_recall`].
    pub fn preview_recall_in(
        &self,
        member: &AgentKey,
        id: Id,
        mode: Mode,
        agent: &AgentEngine<S>,
    ) -> Result<Vec<Id>, Error> {
        let dying = self.dying_with(member, id, mode)?;
        agent.preview_shared_recall(self.number(), &dying, mode)
    }

    /// `id` and what a recall of it would remove in the space.
    fn dying_with(&self, member: &AgentKey, id: Id, mode: Mode) -> Result<Vec<u64>, Error> {
        let removed = self.preview_recall(member, id, mode)?;
        Ok(core::iter::once(id).chain(removed).map(Id::get).collect())
    }

    /// The node of `agent` that stands for node `id` of the space, so that the agent's own
    /// memories may name it in their legs (and die when the space recalls it); written the
    /// first time it is asked for. The agent must hold at least read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` when the agent is not a member; `Error::UnknownId` when the space
    /// has no such node, `Error::DeadParent` when it was recalled; the errors of the agent's
    /// write (as [`AgentEngine::add_lot`]).
    pub fn share_with(&self, agent: &mut AgentEngine<S>, id: Id) -> Result<Id, Error> {
        let shared = self.share_all_with(agent, &[id])?;
        shared.first().copied().ok_or(Error::Internal { what: crate::error_facts::InternalRule::WrittenEntryHasId })
    }

    /// As [`SpaceEngine::share_with`] for every id of `ids` at once, in one durable write of
    /// the agent's; returns the agent's ids, in the order of `ids`. Nothing is written unless
    /// every id is an alive node of the space.
    ///
    /// # Errors
    ///
    /// As [`SpaceEngine::share_with`].
    pub fn share_all_with(&self, agent: &mut AgentEngine<S>, ids: &[Id]) -> Result<Vec<Id>, Error> {
        if self.role_of(agent.agent_number()) == Role::None {
            return Err(Error::UnknownSpace { name: self.name.clone() });
        }
        // From the graph: reading each node's record only to learn it is alive would cost a
        // read of the disk per id.
        for id in ids {
            self.log.check_alive(id.get()).map_err(|error| match error {
                Error::AlreadyRecalled { id } => Error::DeadParent { id },
                other => other,
            })?;
        }
        let space_ids: Vec<u64> = ids.iter().map(|id| id.get()).collect();
        agent.shared_nodes(self.number(), &space_ids)
    }

    /// Applies to `agent` every recall of the space it has not applied yet: each of its
    /// shared nodes whose node the space recalled is recalled in it, with what it built on
    /// it. Returns the memories of the agent that died, ascending. Applying again changes
    /// nothing. Asks for no role: a revoked member loses what it built while it could read.
    ///
    /// # Errors
    ///
    /// Those of [`AgentEngine::recall`].
    pub fn apply_recalls_to(&self, agent: &mut AgentEngine<S>) -> Result<Vec<Id>, Error> {
        agent.apply_space_recalls(self.number(), self.ledger().recalled())
    }

    /// The space's recalls as its members apply them, without its files: unlike the engine,
    /// this may go to other threads, each applying it to members of its own at once.
    #[must_use]
    pub fn recalls(&self) -> SpaceRecalls {
        SpaceRecalls { number: self.number(), recalled: self.ledger().recalled().clone() }
    }

    /// The agents holding a role now, with it, in the order they were first granted one: the
    /// listing of whoever holds the store itself (as its catalog lists agents). A member asks
    /// [`SpaceEngine::members`].
    #[must_use]
    pub fn roles(&self) -> Vec<(u64, Role)> {
        self.ledger().members().collect()
    }

    /// Every agent ever granted a role in the space, revoked ones too: those a recall in it
    /// must reach.
    #[must_use]
    pub fn everyone_granted(&self) -> Vec<u64> {
        self.ledger().everyone_granted().collect()
    }

    /// A lot or memory of the space. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::get`].
    pub fn get(&self, member: &AgentKey, id: Id) -> Result<Node, Error> {
        self.require(member, Role::Read)?;
        self.log.get(id)
    }

    /// A lot or memory of the space with the text a recall without Erase left in the files.
    /// Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::audit`].
    pub fn audit(&self, member: &AgentKey, id: Id) -> Result<Node, Error> {
        self.require(member, Role::Read)?;
        self.log.audit(id)
    }

    /// The trust level of lot or memory `id` of the space under `rules` (its lots' labels, as
    /// an agent's trust is judged). Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::trust`].
    pub fn trust(&mut self, member: &AgentKey, id: Id, rules: &crate::TrustRules) -> Result<crate::TrustLevel, Error> {
        self.require(member, Role::Read)?;
        self.log.trust(id, rules)
    }

    /// The member that wrote lot or memory `id`. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownId` when the space has no such node.
    pub fn author_of(&self, member: &AgentKey, id: Id) -> Result<u64, Error> {
        self.require(member, Role::Read)?;
        self.ledger().author_of(id.get()).ok_or(Error::UnknownId { id })
    }

    /// Every lot and memory `author` wrote, alive or recalled, ascending: what to recall when
    /// that member turns out compromised. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn written_by(&self, member: &AgentKey, author: u64) -> Result<Vec<Id>, Error> {
        self.require(member, Role::Read)?;
        Ok(self.ledger().written_by(author).map(Id::from).collect())
    }

    /// The alive lots and memories of the space, ascending. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn alive(&self, member: &AgentKey) -> Result<(Vec<Id>, Vec<Id>), Error> {
        self.require(member, Role::Read)?;
        Ok((self.log.alive_lots(), self.log.alive_memories()))
    }

    /// The best `limit` alive nodes of the space for `query`. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::search`].
    pub fn search(&mut self, member: &AgentKey, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.require(member, Role::Read)?;
        self.log.search(query, limit)
    }

    /// Checks the whole log of the space, its roles included. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`AgentEngine::verify`].
    pub fn verify(&self, member: &AgentKey) -> Result<Fingerprint, Error> {
        self.require(member, Role::Read)?;
        self.log.verify()
    }

    /// Closes the space's log.
    ///
    /// # Errors
    ///
    /// As [`AgentEngine::close`].
    pub fn close(self) -> Result<(), Error> {
        self.log.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ram_storage::RamStorage;
    use crate::store::StoreEngine;

    struct Team {
        store: StoreEngine<RamStorage>,
        alice: AgentKey,
        bob: AgentKey,
        carol: AgentKey,
    }

    fn team() -> Team {
        let mut store = StoreEngine::open(RamStorage::default(), Options::default()).unwrap();
        let mut key = |name| {
            let token = store.create_agent(name).unwrap();
            store.authenticate(&token).unwrap()
        };
        let (alice, bob, carol) = (key("alice"), key("bob"), key("carol"));
        Team { store, alice, bob, carol }
    }

    #[test]
    fn each_role_does_what_it_allows_and_no_more() {
        let Team { mut store, alice, bob, carol } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Write).unwrap();
        space.grant(&alice, store.grantee("carol").unwrap(), Role::Read).unwrap();
        let lot = space.add_lot(&bob, "wiki", b"deploys go out on tuesdays").unwrap();
        let memory = space.remember(&bob, b"do not deploy on friday", &[Leg::from([lot])]).unwrap();
        let too_low = |held, needed| Error::RoleTooLow { held, needed };
        assert_eq!(space.add_lot(&carol, "wiki", b"x").unwrap_err(), too_low(Role::Read, Role::Write));
        let recall = space.recall(&bob, lot, Mode::Fair, Removal::Untrusted);
        assert_eq!(recall.unwrap_err(), too_low(Role::Write, Role::Admin));
        assert_eq!(
            space.grant(&bob, store.grantee("carol").unwrap(), Role::Admin).unwrap_err(),
            too_low(Role::Write, Role::Admin)
        );
        assert_eq!(space.get(&carol, memory).unwrap().content.as_deref(), Some(&b"do not deploy on friday"[..]));
        assert_eq!(space.recall(&alice, lot, Mode::Fair, Removal::Untrusted), Ok(alloc::vec![memory]));
        assert_eq!(space.alive(&carol), Ok((Vec::new(), Vec::new())));
    }

    #[test]
    fn a_revoke_holds_for_a_handle_already_open_and_for_every_later_open() {
        let Team { mut store, alice, bob, .. } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Write).unwrap();
        let lot = space.add_lot(&bob, "wiki", b"shared").unwrap();
        space.revoke(&alice, bob.number()).unwrap();
        let unknown = Error::UnknownSpace { name: "team".into() };
        assert_eq!(space.get(&bob, lot), Err(unknown.clone()));
        assert_eq!(space.add_lot(&bob, "wiki", b"more"), Err(unknown.clone()));
        space.close().unwrap();
        assert_eq!(store.open_space(bob, "team").map(|_| ()), Err(unknown));
        // What the revoked member wrote still names it.
        let space = store.open_space(alice, "team").unwrap();
        assert_eq!(space.author_of(&alice, lot), Ok(bob.number()));
        assert_eq!(space.members(&alice), Ok(alloc::vec![(alice.number(), Role::Admin)]));
    }

    #[test]
    fn a_non_member_a_wrong_name_and_a_revoked_member_get_one_answer() {
        let Team { mut store, alice, bob, carol } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("carol").unwrap(), Role::Read).unwrap();
        space.revoke(&alice, carol.number()).unwrap();
        let refused = |member, name: &str| store.open_space(member, name).map(|_| ()).unwrap_err();
        let expected = |name: &str| Error::UnknownSpace { name: name.into() };
        assert_eq!(refused(bob, "team"), expected("team"));
        assert_eq!(refused(carol, "team"), expected("team"));
        assert_eq!(refused(alice, "other"), expected("other"));
    }

    #[test]
    fn authors_and_roles_come_back_from_the_log_and_verify_checks_them() {
        let Team { mut store, alice, bob, carol } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Admin).unwrap();
        let first = space.add_lot(&alice, "wiki", b"one").unwrap();
        let second = space.add_lot(&bob, "wiki", b"two").unwrap();
        let third = space.remember(&bob, b"three", &[Leg::from([first, second])]).unwrap();
        space.recall(&bob, first, Mode::Strict, Removal::Erase).unwrap();
        let head = space.verify(&alice).unwrap();
        space.close().unwrap();
        let space = store.open_space(bob, "team").unwrap();
        assert_eq!(space.written_by(&bob, bob.number()), Ok(alloc::vec![second, third]));
        assert_eq!(space.written_by(&bob, alice.number()), Ok(alloc::vec![first]));
        assert_eq!(space.written_by(&bob, carol.number()), Ok(Vec::new()));
        assert_eq!(space.alive(&bob), Ok((alloc::vec![second], Vec::new())));
        assert_eq!(space.get(&bob, first).unwrap().content, None);
        assert_eq!(space.verify(&bob), Ok(head));
    }

    #[test]
    fn the_last_admin_cannot_step_down_but_may_once_another_admin_exists() {
        let Team { mut store, alice, bob, .. } = team();
        let mut space = store.create_space("team", alice).unwrap();
        assert_eq!(space.revoke(&alice, alice.number()), Err(Error::LastAdmin));
        assert_eq!(space.grant(&alice, store.grantee("alice").unwrap(), Role::Read), Err(Error::LastAdmin));
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Admin).unwrap();
        space.grant(&alice, store.grantee("alice").unwrap(), Role::Write).unwrap();
        assert_eq!(space.role_of(alice.number()), Role::Write);
        assert_eq!(space.revoke(&bob, bob.number()), Err(Error::LastAdmin));
    }

    #[test]
    fn spaces_have_names_of_their_own_and_no_token_opens_one() {
        let Team { mut store, alice, .. } = team();
        store.create_space("alice", alice).unwrap();
        assert_eq!(store.create_space("alice", alice).map(|_| ()), Err(Error::SpaceExists { name: "alice".into() }));
        let separator = Err(Error::InvalidName { reason: crate::error_facts::NameProblem::SpaceNameWithSeparator });
        assert_eq!(store.create_space("a:b", alice).map(|_| ()), separator);
        assert_eq!(store.create_space("a,b", alice).map(|_| ()), separator);
        assert_eq!(store.agent_names(), ["alice", "bob", "carol"]);
        assert_eq!(store.space_names(), ["alice"]);
        // Only an agent of the store can be granted a role: never a number a later agent gets.
        assert_eq!(store.grantee("dave"), Err(Error::UnknownAgent { name: "dave".into() }));
        assert_eq!(store.grantee("alice").map(Grantee::number), Ok(alice.number()));
        let reopened = StoreEngine::open(store.storage().clone(), Options::default()).unwrap();
        assert_eq!(reopened.space_names(), ["alice"]);
        let shipped = reopened.replicated_entries();
        assert_eq!(shipped.iter().map(|entry| entry.space).collect::<Vec<_>>(), [false, false, false, true]);
        // A space's token hash is zeros; even a token hashing to it could not reach the space.
        assert!(reopened.open_space(alice, "alice").is_ok());
    }
    /// Whether any file of the store holds `text`.
    fn on_disk(store: &StoreEngine<RamStorage>, text: &[u8]) -> bool {
        store.storage().files().iter().any(|(_, bytes)| bytes.windows(text.len()).any(|window| window == text))
    }

    #[test]
    fn a_recall_in_a_space_reaches_what_each_member_built_on_it() {
        let Team { mut store, alice, bob, carol } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Read).unwrap();
        space.grant(&alice, store.grantee("carol").unwrap(), Role::Write).unwrap();
        let poisoned = space.add_lot(&carol, "web", b"the api key is in the wiki").unwrap();
        let shared_memory = space.remember(&carol, b"keys live in the wiki", &[Leg::from([poisoned])]).unwrap();
        let mut bob_engine = store.open_agent(bob).unwrap();
        let own = bob_engine.add_lot("notes", b"bob's own note").unwrap();
        let stands_for = space.share_with(&mut bob_engine, shared_memory).unwrap();
        assert_eq!(space.share_with(&mut bob_engine, shared_memory), Ok(stands_for), "one shared node a node");
        let nodes_before = bob_engine.node_count();
        let all = space.share_all_with(&mut bob_engine, &[shared_memory, poisoned, shared_memory]).unwrap();
        assert_eq!(all, [stands_for, Id::from(nodes_before + 1), stands_for]);
        assert_eq!(bob_engine.node_count(), nodes_before + 1);
        let only_shared = bob_engine.remember(b"fetch keys from the wiki", &[Leg::from([stands_for])]).unwrap();
        let either = bob_engine.remember(b"keys are somewhere", &[Leg::from([stands_for]), Leg::from([own])]).unwrap();
        let mut carol_engine = store.open_agent(carol).unwrap();
        let carol_shared = space.share_with(&mut carol_engine, poisoned).unwrap();
        let carol_memory = carol_engine.remember(b"wiki holds the key", &[Leg::from([carol_shared])]).unwrap();
        assert_eq!(space.preview_recall_in(&alice, poisoned, Mode::Fair, &bob_engine), Ok(alloc::vec![only_shared]));
        assert_eq!(
            space.preview_recall_in(&alice, poisoned, Mode::Strict, &bob_engine),
            Ok(alloc::vec![only_shared, either])
        );

        assert_eq!(space.recall(&alice, poisoned, Mode::Fair, Removal::Untrusted), Ok(alloc::vec![shared_memory]));
        assert_eq!(space.everyone_granted(), [alice.number(), bob.number(), carol.number()]);
        assert_eq!(space.apply_recalls_to(&mut bob_engine), Ok(alloc::vec![only_shared]));
        assert_eq!(space.apply_recalls_to(&mut carol_engine), Ok(alloc::vec![carol_memory]));
        assert_eq!(space.apply_recalls_to(&mut bob_engine), Ok(Vec::new()), "applied once");
        assert!(!bob_engine.get(stands_for).unwrap().is_alive());
        assert!(bob_engine.get(either).unwrap().is_alive(), "its own leg holds under Fair");
        assert_eq!(bob_engine.alive_memories(), [either]);
        assert_eq!(bob_engine.alive_lots(), [own], "a shared node is no lot");
        // A Strict Erase of the same node later reaches the memory Fair left, and its text.
        space.recall(&alice, poisoned, Mode::Strict, Removal::Erase).unwrap();
        assert_eq!(space.apply_recalls_to(&mut bob_engine), Ok(alloc::vec![either]));
        assert!(!on_disk(&store, b"keys are somewhere") && !on_disk(&store, b"fetch keys from the wiki"));
        assert!(on_disk(&store, b"bob's own note"));
        // Durable in the member: its reopen knows without the space.
        bob_engine.close().unwrap();
        let bob_engine = store.open_agent(bob).unwrap();
        assert_eq!(bob_engine.alive_memories(), Vec::<Id>::new());
        let node = bob_engine.get(stands_for).unwrap();
        assert_eq!(node.kind, crate::node::NodeKind::Shared { space: space.number(), id: shared_memory });
        assert_eq!(bob_engine.spaces_shared_from(), [space.number()]);
    }

    #[test]
    fn a_closed_member_and_a_revoked_one_catch_up_and_an_erase_leaves_no_text() {
        let Team { mut store, alice, bob, .. } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Read).unwrap();
        let poisoned = space.add_lot(&alice, "web", b"poisoned shared source").unwrap();
        let mut bob_engine = store.open_agent(bob).unwrap();
        let stands_for = space.share_with(&mut bob_engine, poisoned).unwrap();
        let derived = bob_engine.remember(b"derived by bob from it", &[Leg::from([stands_for])]).unwrap();
        bob_engine.close().unwrap();
        space.revoke(&alice, bob.number()).unwrap();
        assert_eq!(space.recall(&alice, poisoned, Mode::Fair, Removal::Erase), Ok(Vec::new()));
        assert!(!on_disk(&store, b"poisoned shared source"));
        assert!(on_disk(&store, b"derived by bob from it"), "bob was closed");
        space.close().unwrap();
        // What an open of bob does before its first answer.
        let mut bob_engine = store.open_agent(bob).unwrap();
        for number in bob_engine.spaces_shared_from() {
            let space = store.open_space_to_apply_recalls(number).unwrap();
            assert_eq!(space.apply_recalls_to(&mut bob_engine), Ok(alloc::vec![derived]));
        }
        assert!(!bob_engine.get(derived).unwrap().is_alive());
        assert!(!on_disk(&store, b"derived by bob from it"));
        let unknown = store.open_space_to_apply_recalls(999).map(|_| ()).unwrap_err();
        assert!(matches!(unknown, Error::Corrupt { reason: crate::CorruptReason::SharedNodeOfUnknownSpace, .. }));
    }

    #[test]
    fn a_strict_erase_after_a_fair_recall_erases_a_member_s_memory_it_kills() {
        let Team { mut store, alice, bob, .. } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Read).unwrap();
        let lot = space.add_lot(&alice, "web", b"t1").unwrap();
        let on_lot = space.remember(&alice, b"t2", &[Leg::from([lot])]).unwrap();
        let mut bob_engine = store.open_agent(bob).unwrap();
        let shared = space.share_all_with(&mut bob_engine, &[lot, on_lot]).unwrap();
        let derived = bob_engine
            .remember(b"bob-derived-on-both", &[Leg::from([shared[0], shared[1]]), Leg::from([shared[0]])])
            .unwrap();
        space.recall(&alice, on_lot, Mode::Fair, Removal::Untrusted).unwrap();
        space.apply_recalls_to(&mut bob_engine).unwrap();
        assert!(bob_engine.get(derived).unwrap().is_alive(), "its second leg holds");
        space.recall(&alice, lot, Mode::Strict, Removal::Erase).unwrap();
        assert_eq!(space.apply_recalls_to(&mut bob_engine), Ok(alloc::vec![derived]));
        assert!(!on_disk(&store, b"bob-derived-on-both"));
    }

    #[test]
    fn only_a_member_shares_and_only_what_is_alive() {
        let Team { mut store, alice, bob, carol } = team();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("bob").unwrap(), Role::Read).unwrap();
        let lot = space.add_lot(&alice, "web", b"one").unwrap();
        let mut carol_engine = store.open_agent(carol).unwrap();
        let unknown = Error::UnknownSpace { name: "team".into() };
        assert_eq!(space.share_with(&mut carol_engine, lot), Err(unknown));
        let mut bob_engine = store.open_agent(bob).unwrap();
        assert_eq!(space.share_with(&mut bob_engine, Id::from(7)), Err(Error::UnknownId { id: Id::from(7) }));
        space.recall(&alice, lot, Mode::Fair, Removal::Untrusted).unwrap();
        assert_eq!(space.share_with(&mut bob_engine, lot), Err(Error::DeadParent { id: lot }));
        assert_eq!(bob_engine.node_count(), 0);
    }
    #[test]
    fn an_encrypted_member_loses_the_keys_and_a_compacted_one_keeps_its_shared_nodes() {
        let Team { mut store, alice, .. } = team();
        let token = store.create_encrypted_agent("dave").unwrap();
        let dave = store.authenticate(&token).unwrap();
        let mut space = store.create_space("team", alice).unwrap();
        space.grant(&alice, store.grantee("dave").unwrap(), Role::Read).unwrap();
        let kept = space.add_lot(&alice, "web", b"a sound source").unwrap();
        let poisoned = space.add_lot(&alice, "web", b"a poisoned source").unwrap();
        let mut dave_engine = store.open_agent(dave).unwrap();
        let sound = space.share_with(&mut dave_engine, kept).unwrap();
        let bad = space.share_with(&mut dave_engine, poisoned).unwrap();
        let on_sound = dave_engine.remember(b"from the sound one", &[Leg::from([sound])]).unwrap();
        let on_bad = dave_engine.remember(b"from the poisoned one", &[Leg::from([bad])]).unwrap();
        space.recall(&alice, poisoned, Mode::Fair, Removal::Erase).unwrap();
        assert_eq!(space.apply_recalls_to(&mut dave_engine), Ok(alloc::vec![on_bad]));
        assert_eq!(dave_engine.get(on_bad).unwrap().content, None, "its key is gone");
        dave_engine.compact().unwrap();
        let head = dave_engine.verify().unwrap();
        dave_engine.close().unwrap();
        let dave_engine = store.open_agent(dave).unwrap();
        assert_eq!(dave_engine.verify(), Ok(head));
        assert_eq!(dave_engine.get(on_sound).unwrap().content.as_deref(), Some(&b"from the sound one"[..]));
        assert_eq!(
            dave_engine.get(sound).unwrap().kind,
            crate::node::NodeKind::Shared { space: space.number(), id: kept }
        );
        assert_eq!(dave_engine.alive_memories(), [on_sound]);
    }
}
