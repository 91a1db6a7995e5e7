//! [`LocalSpace`]: a member's handle to a space of a store open in this process, and how a
//! space's recall reaches the members' memories: the members open in this process before the
//! call returns, the closed plaintext ones by opening them for it, and an encrypted one that is
//! closed (whose keys need its token) at its next open, before its first answer.

use std::sync::{mpsc, Arc, Mutex, OnceLock, Weak};

use cheesedb_core::{
    AgentEngine, AgentKey, Error, Fingerprint, Hit, Id, InternalRule, Leg, Mode, Node, Removal, Role, SpaceRecalls,
    SpaceWrite, StoreEngine, TrustLevel, TrustRules,
};

use super::count_as_read;
use crate::files::FileStorage;
use crate::mutex::lock;
use crate::read_tracking::ReadTracking;
use crate::shared::{SharedSpace, SharedStorage, StoreShared};

/// What a member's handle to a space keeps of the member.
pub(crate) struct Member<S: SharedStorage> {
    /// The proof the member's token was checked.
    pub(crate) key: AgentKey,
    /// The member's own engine, which shared nodes are written to.
    pub(crate) engine: crate::shared::SharedEngine<S>,
    /// The read tracking of the member's session: a node of the space it is shown counts as
    /// read, through the shared node that stands for it.
    pub(crate) tracking: Arc<ReadTracking>,
    /// The store's trust rules, which judge the space's nodes as they judge an agent's.
    pub(crate) trust_rules: Arc<TrustRules>,
}

impl<S: SharedStorage> Clone for Member<S> {
    fn clone(&self) -> Member<S> {
        Member {
            key: self.key,
            engine: self.engine.clone(),
            tracking: self.tracking.clone(),
            trust_rules: self.trust_rules.clone(),
        }
    }
}

/// A member's handle to a space of a store open in this process. Clones share the space's
/// engine.
pub(crate) struct LocalSpace<S: SharedStorage = FileStorage> {
    name: String,
    engine: SharedSpace<S>,
    store: Arc<StoreShared<S>>,
    member: Member<S>,
}

impl<S: SharedStorage> Clone for LocalSpace<S> {
    fn clone(&self) -> LocalSpace<S> {
        LocalSpace {
            name: self.name.clone(),
            engine: self.engine.clone(),
            store: self.store.clone(),
            member: self.member.clone(),
        }
    }
}

impl<S: SharedStorage> std::fmt::Debug for LocalSpace<S> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LocalSpace").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<S: SharedStorage> LocalSpace<S> {
    /// The handle of `member` to space `name`, which the member must hold a role in.
    pub(crate) fn open(store: &Arc<StoreShared<S>>, member: Member<S>, name: &str) -> Result<LocalSpace<S>, Error> {
        let catalog = store.catalog()?;
        let number = catalog.space_number(name)?;
        let engine = store.space_engine(number, || catalog.open_space_to_apply_recalls(number))?;
        if lock(&engine.engine)?.role_of(member.key.number()) == Role::None {
            return Err(Error::UnknownSpace { name: String::from(name) });
        }
        members_at_once();
        Ok(LocalSpace { name: String::from(name), engine, store: store.clone(), member })
    }

    /// A handle to a space just created with `member` as its first admin.
    pub(crate) fn created(store: &Arc<StoreShared<S>>, member: Member<S>, name: &str) -> Result<LocalSpace<S>, Error> {
        store.check_writable()?;
        let mut catalog = store.catalog()?;
        let created = catalog.create_space(name, member.key)?;
        let number = created.number();
        let mut created = Some(created);
        let engine = store.space_engine(number, || created.take().ok_or(Error::UnknownSpace { name: name.into() }))?;
        members_at_once();
        Ok(LocalSpace { name: String::from(name), engine, store: store.clone(), member })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Runs `action` on the space's engine.
    fn with<T>(
        &self,
        action: impl FnOnce(&mut cheesedb_core::SpaceEngine<S>, &AgentKey) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.store.check_process()?;
        action(&mut *lock(&self.engine.engine)?, &self.member.key)
    }

    /// Runs a write on the space's engine, once the store is known writable.
    fn write<T>(
        &self,
        action: impl FnOnce(&mut cheesedb_core::SpaceEngine<S>, &AgentKey) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.store.check_writable()?;
        self.with(action)
    }

    pub(crate) fn add_lot(&self, label: &str, content: &[u8]) -> Result<Id, Error> {
        self.grouped(SpaceWrite::Lot { label: String::from(label), content: content.to_vec() })
    }

    pub(crate) fn remember(&self, content: &[u8], legs: &[Leg]) -> Result<Id, Error> {
        self.grouped(SpaceWrite::Memory { content: content.to_vec(), legs: legs.to_vec() })
    }

    /// Writes `write` with the writes other members make at the same time, sharing their sync.
    fn grouped(&self, write: SpaceWrite) -> Result<Id, Error> {
        self.store.check_writable()?;
        self.store.check_process()?;
        let space = &self.engine;
        space.grouping.submit((self.member.key, write), |group| match lock(&space.engine) {
            Ok(mut engine) => engine.write_group(group),
            Err(error) => group.iter().map(|_| Err(error.clone())).collect(),
        })
    }

    pub(crate) fn share(&self, id: Id) -> Result<Id, Error> {
        self.store.check_writable()?;
        // A new node takes the member's next id: it waits, as every write does, while a
        // staged batch holds the member.
        let engine = &self.member.engine;
        engine.gate.write(|| self.with(|space, _| space.share_with(&mut *lock(&engine.engine)?, id)))
    }

    pub(crate) fn share_all(&self, ids: &[Id]) -> Result<Vec<Id>, Error> {
        self.store.check_writable()?;
        let engine = &self.member.engine;
        engine.gate.write(|| self.with(|space, _| space.share_all_with(&mut *lock(&engine.engine)?, ids)))
    }

    /// Counts `ids`, just shown to the member, as read by its session (see [`count_as_read`]).
    fn note_read(&self, ids: &[Id]) -> Result<(), Error> {
        count_as_read(ids, &self.member.tracking, |ids| self.share_all(ids))
    }

    pub(crate) fn recall(&self, id: Id, mode: Mode, removal: Removal) -> Result<super::SpaceRecall, Error> {
        self.store.check_writable()?;
        let catalog = self.store.catalog()?;
        let mut space = lock(&self.engine.engine)?;
        let (in_space, in_members) = reach_members(&self.store, &catalog, || {
            let in_space = space.recall(&self.member.key, id, mode, removal)?;
            Ok((in_space, space.recalls(), space.everyone_granted()))
        })?;
        drop((space, catalog));
        Ok(super::SpaceRecall { in_space, in_members })
    }

    pub(crate) fn preview_recall(&self, id: Id, mode: Mode) -> Result<super::SpaceRecall, Error> {
        let catalog = self.store.catalog()?;
        let space = lock(&self.engine.engine)?;
        let in_space = space.preview_recall(&self.member.key, id, mode)?;
        let mut in_members = Vec::new();
        for number in space.everyone_granted() {
            let Ok(name) = catalog.agent_name(number) else { continue };
            let open = self.store.open_agents()?.get(&number).and_then(Weak::upgrade);
            let removed = match open {
                Some(engine) => space.preview_recall_in(&self.member.key, id, mode, &*lock(&engine.engine)?)?,
                None if catalog.is_encrypted(number) => continue,
                None => space.preview_recall_in(&self.member.key, id, mode, &catalog.open_agent_by_number(number)?)?,
            };
            if !removed.is_empty() {
                in_members.push((name, removed));
            }
        }
        Ok(super::SpaceRecall { in_space, in_members })
    }

    pub(crate) fn get(&self, id: Id) -> Result<Node, Error> {
        let node = self.with(|space, key| space.get(key, id))?;
        if node.is_alive() {
            self.note_read(&[node.id])?;
        }
        Ok(node)
    }

    pub(crate) fn audit(&self, id: Id) -> Result<Node, Error> {
        self.with(|space, key| space.audit(key, id))
    }

    pub(crate) fn trust(&self, id: Id) -> Result<TrustLevel, Error> {
        self.with(|space, key| space.trust(key, id, &self.member.trust_rules))
    }

    pub(crate) fn author_of(&self, id: Id) -> Result<String, Error> {
        let number = self.with(|space, key| space.author_of(key, id))?;
        Ok(self.store.agent_name(number).unwrap_or_else(|_| number.to_string()))
    }

    pub(crate) fn written_by(&self, author: &str) -> Result<Vec<Id>, Error> {
        let number = self.store.catalog()?.agent_number(author)?;
        self.with(|space, key| space.written_by(key, number))
    }

    pub(crate) fn alive(&self) -> Result<(Vec<Id>, Vec<Id>), Error> {
        self.with(|space, key| space.alive(key))
    }

    pub(crate) fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, Error> {
        let hits = self.with(|space, key| space.search(key, query, limit))?;
        self.note_read(&hits.iter().map(|hit| hit.id).collect::<Vec<Id>>())?;
        Ok(hits)
    }

    pub(crate) fn members(&self) -> Result<Vec<(String, Role)>, Error> {
        let members = self.with(|space, key| space.members(key))?;
        let catalog = self.store.catalog()?;
        Ok(members.into_iter().filter_map(|(number, role)| Some((catalog.agent_name(number).ok()?, role))).collect())
    }

    pub(crate) fn grant(&self, agent: &str, role: Role) -> Result<(), Error> {
        let grantee = self.store.catalog()?.grantee(agent)?;
        self.write(|space, key| space.grant(key, grantee, role))
    }

    pub(crate) fn revoke(&self, agent: &str) -> Result<(), Error> {
        let number = self.store.catalog()?.agent_number(agent)?;
        self.write(|space, key| space.revoke(key, number))
    }

    pub(crate) fn verify(&self) -> Result<Fingerprint, Error> {
        self.with(|space, key| space.verify(key))
    }
}

/// The most members whose part of a recall is applied at once.
const MEMBERS_AT_ONCE_MAX: usize = 8;
/// The most members found and waiting for their part to be applied: a closed one is open while
/// it waits, with its files and its graph.
const MEMBERS_QUEUED_MAX: usize = 32;

/// How many members' parts to apply at once: one more than the processors, since each part
/// alternates work on a processor with a wait for its own sync (measured on 2 cores: 3 at once
/// beat 2, 4 and 8), and never more than [`MEMBERS_AT_ONCE_MAX`]. Asked once, by the first
/// handle to a space: learning the processors reads files of the system (measured: 0.15 ms),
/// which a recall should not wait for.
fn members_at_once() -> usize {
    static AT_ONCE: OnceLock<usize> = OnceLock::new();
    *AT_ONCE.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .saturating_add(1)
            .min(MEMBERS_AT_ONCE_MAX)
    })
}

/// A member a space's recall reaches, found before its part is applied.
enum Reached<S: SharedStorage> {
    /// Open in this process: its part goes through its engine.
    Open(crate::shared::SharedEngine<S>),
    /// Closed, so opened for its part, then closed again.
    Opened(Box<AgentEngine<S>>),
}

/// Each reached member's name and what died in it.
type MembersRemoved = Vec<(String, Vec<Id>)>;

/// What became of one member's part: its name and what died in it, if anything did.
type PartOutcome = Result<Option<(String, Vec<Id>)>, Error>;

/// Recalls in a space with `recall_in_space`, which gives what it removed there, the space's
/// recalls and everyone ever granted a role in it; then applies those recalls to each of them:
/// those open in this process through their engines, the closed plaintext ones by opening
/// them, several at once. Returns what the space's recall removed and each reached member's
/// removed memories, in the order the members were first granted a role; on a failure in a
/// member, goes on with the others and returns the first error in that order.
fn reach_members<S: SharedStorage, T>(
    store: &Arc<StoreShared<S>>,
    catalog: &StoreEngine<S>,
    recall_in_space: impl FnOnce() -> Result<(T, SpaceRecalls, Vec<u64>), Error>,
) -> Result<(T, MembersRemoved), Error> {
    let workers = members_at_once();
    // Set once the space's recall is durable, before the first member is queued.
    let recalls: OnceLock<SpaceRecalls> = OnceLock::new();
    // The members are found here, one after the other, since the catalog serves one thread at a
    // time; the queue is bounded, so only so many closed members are open at once however many
    // the space has.
    let (sender, queue) = mpsc::sync_channel::<(usize, String, Reached<S>)>(MEMBERS_QUEUED_MAX);
    let queue = Mutex::new(queue);
    let done: Mutex<Vec<(usize, PartOutcome)>> = Mutex::new(Vec::new());
    let mut expected = 0;
    let in_space = std::thread::scope(|scope| {
        // Started before the space's own part, so that starting them (measured: 0.2 ms for
        // three) is not on the way from the space's sync to the members' parts.
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some((index, name, member)) = lock(&queue).ok().and_then(|queue| queue.recv().ok()) {
                    let Some(recalls) = recalls.get() else { break };
                    let applied = apply_part(store, recalls, member);
                    let outcome = applied.map(|removed| (!removed.is_empty()).then_some((name, removed)));
                    if let Ok(mut done) = lock(&done) {
                        done.push((index, outcome));
                    }
                }
            });
        }
        // On a refusal the sender's drop ends the workers at once.
        let (in_space, space_recalls, everyone_granted) = recall_in_space()?;
        recalls.get_or_init(|| space_recalls);
        for (index, number) in everyone_granted.into_iter().enumerate() {
            let found = match find_member(store, catalog, number) {
                Ok(Some((name, member))) => sender.send((index, name, member)).is_ok(),
                Ok(None) => continue,
                Err(error) => lock(&done).map(|mut done| done.push((index, Err(error)))).is_ok(),
            };
            expected += usize::from(found);
        }
        drop(sender); // the workers stop once the queue is empty
        Ok::<T, Error>(in_space)
    })?;
    let lost = Error::Internal { what: InternalRule::MemberPartsAllApplied };
    let mut outcomes = done.into_inner().map_err(|_| lost.clone())?;
    if outcomes.len() != expected {
        return Err(lost);
    }
    outcomes.sort_by_key(|(index, _)| *index);
    let mut reached = Vec::new();
    let mut first_error = None;
    for (_, outcome) in outcomes {
        match outcome {
            Ok(Some(part)) => reached.push(part),
            Ok(None) => {}
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    first_error.map_or(Ok((in_space, reached)), Err)
}

/// Agent `number` as a space's recall reaches it, with its name: `None` for a deleted agent
/// (no memory of it is left) and for a closed encrypted one (its keys need its token: its next
/// open applies the recall before its first answer).
fn find_member<S: SharedStorage>(
    store: &StoreShared<S>,
    catalog: &StoreEngine<S>,
    number: u64,
) -> Result<Option<(String, Reached<S>)>, Error> {
    let Ok(name) = catalog.agent_name(number) else { return Ok(None) };
    let member = match store.open_agents()?.get(&number).and_then(Weak::upgrade) {
        Some(engine) => Reached::Open(engine),
        None if catalog.is_encrypted(number) => return Ok(None),
        None => Reached::Opened(Box::new(catalog.open_agent_by_number(number)?)),
    };
    Ok(Some((name, member)))
}

/// Applies `recalls` to one member; returns what died in it. An open member whose part left
/// enough dead text starts its automatic compaction.
fn apply_part<S: SharedStorage>(
    store: &Arc<StoreShared<S>>,
    recalls: &SpaceRecalls,
    member: Reached<S>,
) -> Result<Vec<Id>, Error> {
    match member {
        Reached::Open(engine) => {
            let removed = recalls.apply_to(&mut *lock(&engine.engine)?)?;
            crate::auto_compaction::start_if_due(&engine, store)?;
            Ok(removed)
        }
        Reached::Opened(mut engine) => {
            let removed = recalls.apply_to(&mut engine)?;
            engine.close()?;
            Ok(removed)
        }
    }
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
        lock(&space.engine)?.apply_recalls_to(engine)?;
    }
    Ok(())
}
