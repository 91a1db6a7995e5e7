//! [`Space`]: one member's handle to a space its store shares between agents.
//!
//! A space is reached only through a member's own [`Agent`](crate::Agent) ([`crate::Agent::space`]),
//! and every call is bounded by that member's role now. A recall in the space reaches every
//! member's memories built on what it recalled: the members open in this process before the call
//! returns, the closed plaintext ones by opening them for it, and an encrypted one that is closed
//! (whose keys need its token) at its next open, before its first answer.

use std::sync::{Arc, Weak};

use cheesedb_core::{
    AgentEngine, AgentKey, Error, Fingerprint, Hit, Id, Leg, Mode, Node, Removal, Role, StoreEngine, TrustLevel,
    TrustRules,
};

use crate::files::FileStorage;
use crate::mutex::lock;
use crate::shared::{SharedSpace, SharedStorage, StoreShared};

/// What a recall in a space removed: in the space, and in each member's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceRecall {
    /// The space's memories that died with the recalled id, ascending.
    pub in_space: Vec<Id>,
    /// Each member (by name) whose memories died with it, and those memories, ascending.
    pub in_members: Vec<(String, Vec<Id>)>,
}

/// A space and the agents holding a role in it now, as [`crate::Store::spaces`] lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceMembers {
    /// The space's name.
    pub name: String,
    /// Each agent holding a role, by name, with it, in the order first granted one.
    pub members: Vec<(String, Role)>,
}

/// One member's handle to a space. Cheap to clone; clones share the space's engine.
pub struct Space<S: SharedStorage = FileStorage> {
    name: String,
    key: AgentKey,
    engine: SharedSpace<S>,
    store: Arc<StoreShared<S>>,
    /// The member's own engine, which shared nodes are written to.
    member: crate::shared::SharedEngine<S>,
    /// The store's trust rules, which judge the space's nodes as they judge an agent's.
    trust_rules: Arc<TrustRules>,
}

impl<S: SharedStorage> Clone for Space<S> {
    fn clone(&self) -> Space<S> {
        Space {
            name: self.name.clone(),
            key: self.key,
            engine: self.engine.clone(),
            store: self.store.clone(),
            member: self.member.clone(),
            trust_rules: self.trust_rules.clone(),
        }
    }
}

impl<S: SharedStorage> std::fmt::Debug for Space<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Space").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<S: SharedStorage> Space<S> {
    /// The handle of `key`'s agent (whose engine is `member`) to space `name`, which the agent
    /// must hold a role in.
    pub(crate) fn open(
        store: &Arc<StoreShared<S>>,
        key: AgentKey,
        member: crate::shared::SharedEngine<S>,
        trust_rules: Arc<TrustRules>,
        name: &str,
    ) -> Result<Space<S>, Error> {
        let catalog = store.catalog()?;
        let number = catalog.space_number(name)?;
        let engine = store.space_engine(number, || catalog.open_space_to_apply_recalls(number))?;
        if lock(&engine)?.role_of(key.number()) == Role::None {
            return Err(Error::UnknownSpace { name: String::from(name) });
        }
        Ok(Space { name: String::from(name), key, engine, store: store.clone(), member, trust_rules })
    }

    /// A handle to a space just created by `key`'s agent.
    pub(crate) fn created(
        store: &Arc<StoreShared<S>>,
        key: AgentKey,
        member: crate::shared::SharedEngine<S>,
        trust_rules: Arc<TrustRules>,
        name: &str,
    ) -> Result<Space<S>, Error> {
        store.check_writable()?;
        let mut catalog = store.catalog()?;
        let created = catalog.create_space(name, key)?;
        let number = created.number();
        let mut created = Some(created);
        let engine = store.space_engine(number, || created.take().ok_or(Error::UnknownSpace { name: name.into() }))?;
        Ok(Space { name: String::from(name), key, engine, store: store.clone(), member, trust_rules })
    }

    /// The space's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `action` on the space's engine.
    fn with<T>(
        &self,
        action: impl FnOnce(&mut cheesedb_core::SpaceEngine<S>, &AgentKey) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.store.check_process()?;
        action(&mut *lock(&self.engine)?, &self.key)
    }

    /// Runs a write on the space's engine, once the store is known writable.
    fn write<T>(
        &self,
        action: impl FnOnce(&mut cheesedb_core::SpaceEngine<S>, &AgentKey) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.store.check_writable()?;
        self.with(action)
    }

    /// Adds a source to the space, written by this member. Needs write.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace` once the member holds no role, `Error::RoleTooLow`, and those of
    /// [`crate::Agent::add_lot`].
    pub fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.write(|space, key| space.add_lot(key, label, content))
    }

    /// Adds a memory of the space learned through `legs` (ids of the space). Needs write.
    ///
    /// # Errors
    ///
    /// As [`Space::add_lot`], and those of [`crate::Agent::remember`].
    pub fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.write(|space, key| space.remember(key, content, legs))
    }

    /// The id, in this member's own memory, that stands for node `id` of the space: give it in
    /// the legs of the member's memories to build on the space's node. A recall of the node in
    /// the space then removes what the member built on it. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownId` when the space has no such node,
    /// `Error::DeadParent` when it was recalled; the errors of the member's write.
    pub fn share(&self, id: Id) -> Result<Id, Error> {
        self.store.check_writable()?;
        // A new node takes the member's next id: it waits, as every write does, while a
        // staged batch holds the member.
        self.member.gate.write(|| self.with(|space, _| space.share_with(&mut *lock(&self.member.engine)?, id)))
    }

    /// [`Space::share`] of every id of `ids` at once, in one durable write; the member's ids,
    /// in the order of `ids`. Nothing is written unless every id is an alive node of the space.
    ///
    /// # Errors
    ///
    /// As [`Space::share`].
    pub fn share_all(&self, ids: &[Id]) -> Result<Vec<Id>, Error> {
        self.store.check_writable()?;
        self.member.gate.write(|| self.with(|space, _| space.share_all_with(&mut *lock(&self.member.engine)?, ids)))
    }

    /// Recalls `id` in the space, with what depends on it there and in every member's memory
    /// (revoked members too). Needs admin. Durable in the space before it returns, and applied
    /// to every member open in this process and every closed plaintext one; a closed encrypted
    /// member applies it at its next open, before its first answer. With `Removal::Erase`, the
    /// text of every dependent, in the space and in those members, is off the disk when this
    /// returns.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, `Error::RoleTooLow`, and those of [`crate::Agent::recall`]. When
    /// the space's recall is stored but a member's part fails, the first such error; the others
    /// were still reached, and that member applies it at its next open.
    pub fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<SpaceRecall, Error> {
        self.store.check_writable()?;
        let catalog = self.store.catalog()?;
        let mut space = lock(&self.engine)?;
        let in_space = space.recall(&self.key, id, mode, removal)?;
        let in_members = reach_members(&self.store, &catalog, &space)?;
        Ok(SpaceRecall { in_space, in_members })
    }

    /// What [`Space::recall`] of `id` with `mode` would remove, in the space and in each member
    /// (its Untrusted answer), without removing anything. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::preview_recall`].
    pub fn preview_recall(&self, id: Id, mode: Mode) -> Result<SpaceRecall, Error> {
        let catalog = self.store.catalog()?;
        let space = lock(&self.engine)?;
        let in_space = space.preview_recall(&self.key, id, mode)?;
        let mut in_members = Vec::new();
        for number in space.everyone_granted() {
            let Ok(name) = catalog.agent_name(number) else { continue };
            let open = self.store.open_agents()?.get(&number).and_then(Weak::upgrade);
            let removed = match open {
                Some(engine) => space.preview_recall_in(&self.key, id, mode, &*lock(&engine.engine)?)?,
                None if catalog.is_encrypted(number) => continue,
                None => space.preview_recall_in(&self.key, id, mode, &catalog.open_agent_by_number(number)?)?,
            };
            if !removed.is_empty() {
                in_members.push((name, removed));
            }
        }
        Ok(SpaceRecall { in_space, in_members })
    }

    /// A lot or memory of the space. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::get`].
    pub fn get(&self, id: Id) -> Result<Node, Error> {
        self.with(|space, key| space.get(key, id))
    }

    /// A lot or memory of the space with the text a recall without Erase left in the files, as
    /// [`crate::Agent::audit`] gives it. Needs read.
    ///
    /// # Errors
    ///
    /// As [`Space::get`].
    pub fn audit(&self, id: Id) -> Result<Node, Error> {
        self.with(|space, key| space.audit(key, id))
    }

    /// The trust level of lot or memory `id` of the space, under the store's trust rules.
    /// Needs read.
    ///
    /// # Errors
    ///
    /// As [`crate::Agent::trust`].
    pub fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.with(|space, key| space.trust(key, id, &self.trust_rules))
    }

    /// The name of the member that wrote lot or memory `id` (a deleted agent's number, as
    /// text, once the store no longer names it). Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownId` when the space has no such node.
    pub fn author_of(&self, id: Id) -> Result<String, Error> {
        let number = self.with(|space, key| space.author_of(key, id))?;
        Ok(self.store.agent_name(number).unwrap_or_else(|_| number.to_string()))
    }

    /// Every lot and memory the member named `author` wrote, alive or recalled, ascending.
    /// Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`; `Error::UnknownAgent` when no agent has that name.
    pub fn written_by(&self, author: &str) -> Result<Vec<Id>, Error> {
        let number = self.store.catalog()?.agent_number(author)?;
        self.with(|space, key| space.written_by(key, number))
    }

    /// The alive lots and memories of the space, ascending. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn alive(&self) -> Result<(Vec<Id>, Vec<Id>), Error> {
        self.with(|space, key| space.alive(key))
    }

    /// The best `limit` alive nodes of the space for `query`. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::search`].
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        self.with(|space, key| space.search(key, query, limit))
    }

    /// The members holding a role now, by name, with it. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`.
    pub fn members(&self) -> Result<Vec<(String, Role)>, Error> {
        let members = self.with(|space, key| space.members(key))?;
        let catalog = self.store.catalog()?;
        Ok(members.into_iter().filter_map(|(number, role)| Some((catalog.agent_name(number).ok()?, role))).collect())
    }

    /// Gives the agent named `agent` the role `role` in the space, or changes it. Needs admin.
    ///
    /// # Errors
    ///
    /// `Error::UnknownAgent` when no agent has that name; those of the core's grant
    /// (`Error::UnknownSpace`, `Error::RoleTooLow`, `Error::LastAdmin`, a limit, the write's).
    pub fn grant(&self, agent: &str, role: Role) -> Result<(), Error> {
        let grantee = self.store.catalog()?.grantee(agent)?;
        self.write(|space, key| space.grant(key, grantee, role))
    }

    /// Takes every role from the agent named `agent`. What it wrote stays and names it, and
    /// what it built on the space is still reached by later recalls. Needs admin.
    ///
    /// # Errors
    ///
    /// As [`Space::grant`].
    pub fn revoke(&self, agent: &str) -> Result<(), Error> {
        let number = self.store.catalog()?.agent_number(agent)?;
        self.write(|space, key| space.revoke(key, number))
    }

    /// Checks the whole log of the space, its roles included. Needs read.
    ///
    /// # Errors
    ///
    /// `Error::UnknownSpace`, and those of [`crate::Agent::verify`].
    pub fn verify(&self) -> Result<Fingerprint, Error> {
        self.with(|space, key| space.verify(key))
    }
}

/// Applies the recalls of `space` to every agent ever granted a role in it: those open in this
/// process through their engines, the closed plaintext ones by opening them. Returns each
/// reached member's removed memories; on a failure, goes on with the others and returns the
/// first error.
fn reach_members<S: SharedStorage>(
    store: &StoreShared<S>,
    catalog: &StoreEngine<S>,
    space: &cheesedb_core::SpaceEngine<S>,
) -> Result<Vec<(String, Vec<Id>)>, Error> {
    let mut reached = Vec::new();
    let mut first_error = None;
    for number in space.everyone_granted() {
        // A deleted agent has no memory left to reach.
        let Ok(name) = catalog.agent_name(number) else { continue };
        let open = store.open_agents()?.get(&number).and_then(Weak::upgrade);
        let applied = match open {
            Some(engine) => lock(&engine.engine).and_then(|mut engine| space.apply_recalls_to(&mut engine)),
            // Its keys need its token: its next open applies it first.
            None if catalog.is_encrypted(number) => continue,
            None => catalog.open_agent_by_number(number).and_then(|mut engine| {
                let removed = space.apply_recalls_to(&mut engine)?;
                engine.close()?;
                Ok(removed)
            }),
        };
        match applied {
            Ok(removed) if removed.is_empty() => {}
            Ok(removed) => reached.push((name, removed)),
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    first_error.map_or(Ok(reached), Err)
}

/// Applies to `engine`, just opened, the recalls of every space it holds shared nodes of, before
/// it gives any answer.
pub(crate) fn apply_space_recalls<S: SharedStorage>(
    store: &StoreShared<S>,
    catalog: &StoreEngine<S>,
    engine: &mut AgentEngine<S>,
) -> Result<(), Error> {
    for number in engine.spaces_shared_from() {
        let space = store.space_engine(number, || catalog.open_space_to_apply_recalls(number))?;
        lock(&space)?.apply_recalls_to(engine)?;
    }
    Ok(())
}
