//! The spaces part of a run: three agents and one space of one store, members of it with roles
//! that change, lots and memories in the space and in the agents' own memories (these built on
//! the space's nodes through shared nodes), and recalls in the space, some cut by a power loss at
//! any storage operation of the space's write or of a member's part. Checked against the
//! reference model of spaces ([`StoreModel`]) after every recall and every reopen:
//!
//! - (a) every node of the space and of every agent is alive exactly when the model says: no
//!   member serves a memory that depends on a recalled shared node, once it was applied to the
//!   member (at the recall, or at its reopen before any answer), and nothing else died;
//! - (b) the text of every node an Erase covered, in the space and in every member, is in no
//!   image of any file (durable, cached, or pending), before the recall returns.
//!
//! The part has its own disk and stream of chance, so it changes nothing of the rest of the run.

use std::collections::BTreeMap;

use cheesedb_core::{
    AgentEngine, AgentKey, Error, Id, Leg, Mode, Options, Removal, Role, SpaceEngine, SpaceWrite, StoreEngine,
};

use super::RunStats;
use crate::model::Text;
use crate::random::Random;
use crate::space_model::{Log, NodeKey, Role as ModelRole, StoreModel};
use crate::storage::SimStorage;

/// Seeds whose run has a spaces part: one in this many.
const ONE_SEED_IN: u64 = 4;
/// Steps of the spaces part.
const STEPS: u64 = 60;
/// The agents, the first the space's admin for good.
const AGENTS: [&str; 3] = [ADMIN, "bo", "cy"];
/// The space's admin.
const ADMIN: &str = "ada";
/// The space.
const SPACE: &str = "team";

/// Whether the run of `seed` has a spaces part: by a hash of the seed, not a draw.
pub(crate) fn chosen(seed: u64) -> bool {
    let mixed = (seed ^ 0x5ace_5ace_0bad_f00d).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 32) % ONE_SEED_IN == 0
}

/// A broken promise of the spaces part.
type Checked<T = ()> = Result<T, String>;

fn engine_error(what: &str) -> impl Fn(Error) -> String + '_ {
    move |error| format!("{what}: {error}")
}

/// One agent of the part.
struct Member {
    name: &'static str,
    key: AgentKey,
    engine: AgentEngine<SimStorage>,
    /// Its nodes in the model to their ids in the engine (shared nodes take ids too).
    ids: BTreeMap<u64, Id>,
}

impl Member {
    fn id_of(&self, model_id: u64) -> Checked<Id> {
        self.ids.get(&model_id).copied().ok_or_else(|| format!("harness error: {} has no node {model_id}", self.name))
    }

    fn log(&self) -> Log {
        Log::Agent(self.name.to_string())
    }
}

struct Spaces {
    random: Random,
    options: Options,
    disk: SimStorage,
    store: StoreEngine<SimStorage>,
    space: SpaceEngine<SimStorage>,
    /// The agents; the first is the space's admin.
    members: Vec<Member>,
    admin: AgentKey,
    model: StoreModel,
    next_marker: u64,
    stats: RunStats,
}

fn refused(refusal: crate::space_model::Refusal) -> String {
    format!("the model refused: {refusal:?}")
}

/// Runs the spaces part of the run of `seed`, adding its counts to `stats`.
pub(crate) fn run(seed: u64, stats: &mut RunStats) -> Checked {
    let mut part = Spaces::start(seed)?;
    for _ in 0..STEPS {
        part.step()?;
    }
    part.crash_and_reopen()?;
    stats.merge(&part.stats);
    Ok(())
}

impl Spaces {
    fn start(seed: u64) -> Checked<Spaces> {
        let mut random = Random::seeded(seed ^ 0x7370_6163_6573_2121);
        let disk = SimStorage::without_faults(random.next_u64());
        let segment_size_max_bytes = random.between(4096, 64 * 1024);
        let options = Options::default().segment_size_max_bytes(segment_size_max_bytes).preallocate_bytes(0);
        let mut store = StoreEngine::open(disk.clone(), options.clone()).map_err(engine_error("open"))?;
        let mut model = StoreModel::default();
        let mut members = Vec::new();
        for name in AGENTS {
            let token = store.create_agent(name).map_err(engine_error("create agent"))?;
            let key = store.authenticate(&token).map_err(engine_error("authenticate"))?;
            let engine = store.open_agent(key).map_err(engine_error("open agent"))?;
            model.add_agent(name);
            members.push(Member { name, key, engine, ids: BTreeMap::new() });
        }
        let admin = members.first().map(|member| member.key).ok_or("harness error: no agent")?;
        let space = store.create_space(SPACE, admin).map_err(engine_error("create space"))?;
        model.create_space(SPACE, ADMIN).map_err(refused)?;
        let stats = RunStats { space_runs: 1, ..RunStats::default() };
        Ok(Spaces { random, options, disk, store, space, members, admin, model, next_marker: 0, stats })
    }

    fn member(&self, index: usize) -> Checked<&Member> {
        self.members.get(index).ok_or_else(|| format!("harness error: no agent {index}"))
    }

    fn marker(&mut self) -> Vec<u8> {
        self.next_marker += 1;
        format!("space-part-marker-{:08}-{:016x}", self.next_marker, self.random.next_u64()).into_bytes()
    }

    fn step(&mut self) -> Checked {
        self.stats.operations += 1;
        match self.random.weighted(&[4, 3, 3, 4, 2, 2, 1, 2]) {
            0 => self.space_write(),
            1 => self.own_lot(),
            2 => self.own_memory(),
            3 => self.space_recall(),
            4 => self.change_role(),
            5 => self.own_recall(),
            6 => self.crash_and_reopen(),
            _ => self.grouped_space_writes(),
        }
    }

    fn alive_in(&self, log: &Log) -> Vec<u64> {
        self.model.nodes.iter().filter(|(key, node)| key.log == *log && node.alive).map(|(key, _)| key.id).collect()
    }

    fn alive_space_nodes(&self) -> Vec<u64> {
        self.alive_in(&space_log())
    }

    /// A lot or a memory of the space, by a member that may write.
    fn space_write(&mut self) -> Checked {
        let writers: Vec<(&'static str, AgentKey)> = self
            .members
            .iter()
            .filter(|member| self.model.role(member.name, SPACE) >= Some(ModelRole::Write))
            .map(|member| (member.name, member.key))
            .collect();
        let Some(&(writer, key)) = self.random.pick(&writers) else { return Ok(()) };
        let content = self.marker();
        let alive = self.alive_space_nodes();
        if alive.is_empty() || self.random.chance(0.4) {
            let id = self.space.add_lot(&key, "web", &content).map_err(engine_error("space lot"))?;
            let node = self.model.add_lot(writer, &space_log(), &content).map_err(refused)?;
            return same_id(id, node.id);
        }
        let legs = self.draw_legs(&alive);
        let engine_legs: Vec<Leg> = legs.iter().map(|leg| leg.iter().copied().map(Id::from).collect()).collect();
        let model_legs: Vec<Vec<NodeKey>> =
            legs.iter().map(|leg| leg.iter().map(|id| NodeKey { log: space_log(), id: *id }).collect()).collect();
        let id = self.space.remember(&key, &content, &engine_legs).map_err(engine_error("space memory"))?;
        let node = self.model.remember(writer, &space_log(), &content, &model_legs).map_err(refused)?;
        same_id(id, node.id)
    }

    /// Two to four lots by members drawn at random (writers or not) as one group, the way
    /// members writing at once share a sync: each must fare as the model says, take the model's
    /// id and name its own member, whatever the others of its group did.
    fn grouped_space_writes(&mut self) -> Checked {
        let count = self.random.between(2, 4);
        let mut writes = Vec::new();
        let mut names = Vec::new();
        for _ in 0..count {
            let Some(member) = self.random.pick(&self.members) else { return Ok(()) };
            let (name, key) = (member.name, member.key);
            let content = self.marker();
            names.push((name, key, content.clone()));
            writes.push((key, SpaceWrite::Lot { label: String::from("web"), content }));
        }
        let outcomes = self.space.write_group(&writes);
        for ((name, key, content), outcome) in names.into_iter().zip(outcomes) {
            match (outcome, self.model.add_lot(name, &space_log(), &content)) {
                (Ok(id), Ok(node)) => {
                    same_id(id, node.id)?;
                    let author = self.space.author_of(&key, id).map_err(engine_error("grouped lot's author"))?;
                    if author != key.number() {
                        return Err(format!("grouped lot {id} by {name} names agent {author} as its author"));
                    }
                }
                (Err(_), Err(_)) => {}
                (outcome, expected) => {
                    return Err(format!("a grouped lot by {name} gave {outcome:?}, the model {expected:?}"));
                }
            }
        }
        Ok(())
    }

    /// One to three legs of one to three parents each, drawn from `ids`.
    fn draw_legs(&mut self, ids: &[u64]) -> Vec<Vec<u64>> {
        let legs = self.random.between(1, 3);
        (0..legs)
            .map(|_| {
                let parents = self.random.between(1, 3);
                let mut leg: Vec<u64> = (0..parents).filter_map(|_| self.random.pick(ids).copied()).collect();
                leg.sort_unstable();
                leg.dedup();
                leg
            })
            .collect()
    }

    fn own_lot(&mut self) -> Checked {
        let index = self.random.index(self.members.len());
        let content = self.marker();
        let Some(member) = self.members.get_mut(index) else { return Err(format!("harness error: no agent {index}")) };
        let id = member.engine.add_lot("notes", &content).map_err(engine_error("own lot"))?;
        let node = self.model.add_lot(member.name, &member.log(), &content).map_err(refused)?;
        member.ids.insert(node.id, id);
        Ok(())
    }

    /// A memory of a member's own, on its own nodes and on nodes of the space while it reads it.
    fn own_memory(&mut self) -> Checked {
        let index = self.random.index(self.members.len());
        let (name, log) = {
            let member = self.member(index)?;
            (member.name, member.log())
        };
        let own = self.alive_in(&log).into_iter().map(|id| NodeKey { log: log.clone(), id });
        let reads = self.model.role(name, SPACE).is_some();
        let shared = if reads { self.alive_space_nodes() } else { Vec::new() };
        let choices: Vec<NodeKey> = own.chain(shared.into_iter().map(|id| NodeKey { log: space_log(), id })).collect();
        if choices.is_empty() {
            return Ok(());
        }
        let positions: Vec<u64> = (0..choices.len() as u64).collect();
        let drawn = self.draw_legs(&positions);
        let model_legs: Vec<Vec<NodeKey>> = drawn
            .iter()
            .map(|leg| leg.iter().filter_map(|position| choices.get(*position as usize).cloned()).collect())
            .collect();
        let content = self.marker();
        let space = &self.space;
        let Some(member) = self.members.get_mut(index) else { return Err(format!("harness error: no agent {index}")) };
        let mut engine_legs = Vec::new();
        for leg in &model_legs {
            let mut engine_leg = Vec::new();
            for parent in leg {
                engine_leg.push(match parent.log {
                    Log::Space(_) => {
                        space.share_with(&mut member.engine, Id::from(parent.id)).map_err(engine_error("share"))?
                    }
                    Log::Agent(_) => member.id_of(parent.id)?,
                });
            }
            engine_legs.push(engine_leg.into_iter().collect::<Leg>());
        }
        let id = member.engine.remember(&content, &engine_legs).map_err(engine_error("own memory"))?;
        let node = self.model.remember(name, &log, &content, &model_legs).map_err(refused)?;
        member.ids.insert(node.id, id);
        Ok(())
    }

    /// A member recalls a lot or memory of its own (Fair or Strict, Untrusted): its part of a
    /// graph that also holds shared nodes.
    fn own_recall(&mut self) -> Checked {
        let index = self.random.index(self.members.len());
        let log = self.member(index)?.log();
        let alive = self.alive_in(&log);
        let Some(&id) = self.random.pick(&alive) else { return Ok(()) };
        let mode = if self.random.chance(0.5) { Mode::Fair } else { Mode::Strict };
        let Some(member) = self.members.get_mut(index) else { return Err(format!("harness error: no agent {index}")) };
        let engine_id = member.id_of(id)?;
        member.engine.recall(engine_id, mode, Removal::Untrusted).map_err(engine_error("own recall"))?;
        self.model.recall(member.name, &NodeKey { log, id }, mode, Removal::Untrusted).map_err(refused)?;
        self.check_alive()
    }

    /// The admin grants a role to, or revokes, one of the other two.
    fn change_role(&mut self) -> Checked {
        let index = 1 + self.random.index(self.members.len() - 1);
        let (name, number) = {
            let member = self.member(index)?;
            (member.name, member.key.number())
        };
        let roles = [None, Some(ModelRole::Read), Some(ModelRole::Write)];
        let role = self.random.pick(&roles).copied().flatten();
        match role {
            None if self.model.role(name, SPACE).is_some() => {
                self.space.revoke(&self.admin, number).map_err(engine_error("revoke"))?;
                self.model.revoke(ADMIN, SPACE, name).map_err(refused)
            }
            None => Ok(()),
            Some(role) => {
                let engine_role = if role == ModelRole::Read { Role::Read } else { Role::Write };
                let grantee = self.store.grantee(name).map_err(engine_error("grantee"))?;
                self.space.grant(&self.admin, grantee, engine_role).map_err(engine_error("grant"))?;
                self.model.grant(ADMIN, SPACE, name, role).map_err(refused)
            }
        }
    }

    /// A recall in the space, applied to every member; some are cut by a power loss.
    fn space_recall(&mut self) -> Checked {
        let alive = self.alive_space_nodes();
        let Some(&id) = self.random.pick(&alive) else { return Ok(()) };
        let mode = if self.random.chance(0.5) { Mode::Fair } else { Mode::Strict };
        let removal = if self.random.chance(0.5) { Removal::Erase } else { Removal::Untrusted };
        let crash = self.random.chance(0.3);
        if crash {
            let countdown = self.random.below(60);
            self.disk.arm_crash(countdown);
        }
        let done = self.recall_and_reach(Id::from(id), mode, removal);
        self.disk.disarm_crash();
        let target = NodeKey { log: Log::Space(SPACE.to_string()), id };
        match done {
            Ok(()) => {
                self.model.recall(ADMIN, &target, mode, removal).map_err(refused)?;
                self.stats.acknowledged_writes += 1;
                self.check_alive()?;
                self.check_erased()?;
                // An acknowledged recall stays whatever the power does next.
                if crash && self.random.chance(0.5) {
                    self.crash_and_reopen()?;
                }
                Ok(())
            }
            Err(_) if self.disk.is_powered_off() => {
                self.stats.crashes_during_space_recalls += 1;
                self.crash_and_reopen_after_recall(&target, mode, removal)
            }
            Err(error) => Err(format!("space recall: {error}")),
        }
    }

    /// The recall in the space, then its part in every agent ever granted a role.
    fn recall_and_reach(&mut self, id: Id, mode: Mode, removal: Removal) -> Result<(), Error> {
        self.space.recall(&self.admin, id, mode, removal)?;
        for member in &mut self.members {
            self.space.apply_recalls_to(&mut member.engine)?;
        }
        Ok(())
    }

    /// The power went during a recall in the space: after the reopen, the recall is there or
    /// not, whole, in the space and in every member.
    fn crash_and_reopen_after_recall(&mut self, target: &NodeKey, mode: Mode, removal: Removal) -> Checked {
        self.reopen()?;
        let (lots, memories) = self.space.alive(&self.admin).map_err(engine_error("alive"))?;
        let durable = !lots.contains(&Id::from(target.id)) && !memories.contains(&Id::from(target.id));
        if durable {
            self.model.recall(ADMIN, target, mode, removal).map_err(refused)?;
            self.stats.unacknowledged_kept += 1;
        } else {
            self.stats.unacknowledged_lost += 1;
        }
        self.check_alive()?;
        if durable {
            self.check_erased()?;
        }
        Ok(())
    }

    fn crash_and_reopen(&mut self) -> Checked {
        self.reopen()?;
        self.check_alive()?;
        self.check_erased()
    }

    /// The power goes; the store, the space and every agent reopen, and each agent applies the
    /// space's recalls before it answers anything.
    fn reopen(&mut self) -> Checked {
        self.disk.crash();
        self.stats.crashes += 1;
        self.store = StoreEngine::open(self.disk.clone(), self.options.clone()).map_err(engine_error("reopen"))?;
        self.space = self.store.open_space(self.admin, SPACE).map_err(engine_error("reopen space"))?;
        for member in &mut self.members {
            let mut engine = self.store.open_agent(member.key).map_err(engine_error("reopen agent"))?;
            for number in engine.spaces_shared_from() {
                let space = self.store.open_space_to_apply_recalls(number).map_err(engine_error("open to apply"))?;
                space.apply_recalls_to(&mut engine).map_err(engine_error("apply at open"))?;
            }
            member.engine = engine;
        }
        self.stats.reopens += 1;
        Ok(())
    }

    /// (a): every node alive exactly when the model says.
    fn check_alive(&mut self) -> Checked {
        let (lots, memories) = self.space.alive(&self.admin).map_err(engine_error("alive"))?;
        let mut engine_alive: Vec<u64> = lots.iter().chain(&memories).map(|id| id.get()).collect();
        engine_alive.sort_unstable();
        if engine_alive != self.alive_space_nodes() {
            return Err(format!("space: alive {engine_alive:?}, the model says {:?}", self.alive_space_nodes()));
        }
        for member in &self.members {
            let mut expected =
                self.alive_in(&member.log()).into_iter().map(|id| member.id_of(id)).collect::<Checked<Vec<Id>>>()?;
            expected.sort_unstable();
            let mut found: Vec<Id> =
                member.engine.alive_lots().into_iter().chain(member.engine.alive_memories()).collect();
            found.sort_unstable();
            if found != expected {
                return Err(format!("{}: alive {found:?}, the model says {expected:?}", member.name));
            }
        }
        self.stats.space_checks += 1;
        Ok(())
    }

    /// (b): no text an Erase covered is in any image of any file.
    fn check_erased(&mut self) -> Checked {
        let erased: Vec<Vec<u8>> = self
            .model
            .nodes
            .values()
            .filter(|node| node.text == Text::Absent)
            .map(|node| node.content.clone())
            .collect();
        let mut found = None;
        self.disk.visit_images(|path, bytes| {
            if found.is_none() {
                if let Some(text) =
                    erased.iter().find(|text| bytes.windows(text.len()).any(|window| window == &text[..]))
                {
                    found = Some(format!("{} is still in {path}", String::from_utf8_lossy(text)));
                }
            }
        });
        match found {
            Some(message) => Err(format!("erased text left: {message}")),
            None => Ok(()),
        }
    }
}

fn space_log() -> Log {
    Log::Space(SPACE.to_string())
}

fn same_id(engine: Id, model: u64) -> Checked {
    if engine.get() == model {
        Ok(())
    } else {
        Err(format!("the space gave id {engine}, the model {model}"))
    }
}
