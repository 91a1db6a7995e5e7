//! The state of one run: the disk, the engine handles, the model, and the loop that draws and
//! performs each step.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::{AgentEngine, Error, Fingerprint, Options, StoreEngine, Token, TrustLevel};

use super::labels::LABELS;
use super::session::Session;
pub(crate) use super::stop::Step;
pub use super::stop::Stop;
use super::{RunConfig, RunOutcome, RunStats, Violation};
use crate::key_oracle::RecordArchive;
use crate::model::AgentModel;
use crate::random::Random;
use crate::storage::{FaultPlan, SimStorage};

/// What an engine call came to.
pub(crate) enum Called<T> {
    /// Acknowledged (and the trace checker agreed).
    Done(T),
    /// Refused with an error about the arguments or state (nothing written).
    Refused(Error),
    /// Failed with a storage, poisoning or corruption error.
    Failed(Error),
    /// The power went during the call.
    PowerLost,
}

/// Whether `error` reports trouble with the storage or the stored data, rather than a refusal.
pub(crate) fn is_operating_error(error: &Error) -> bool {
    matches!(
        error,
        Error::Io { .. }
            | Error::OutcomeUnknown { .. }
            | Error::Poisoned
            | Error::Corrupt { .. }
            | Error::HistoryMismatch { .. }
    )
}

/// Calls the engine inside a trace window and sorts the result.
pub(crate) fn call<T>(
    storage: &SimStorage,
    label: &str,
    body: impl FnOnce() -> Result<T, Error>,
) -> Result<Called<T>, Stop> {
    storage.begin_call(label);
    match body() {
        Ok(value) => {
            storage.acknowledge().map_err(Stop::Violation)?;
            Ok(Called::Done(value))
        }
        Err(error) => {
            storage.refuse(&error.to_string());
            if storage.is_powered_off() {
                Ok(Called::PowerLost)
            } else if is_operating_error(&error) {
                Ok(Called::Failed(error))
            } else {
                Ok(Called::Refused(error))
            }
        }
    }
}

/// One agent: its handle, its model and what is in doubt about it.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    /// `None` when the agent appeared after a create that was never acknowledged.
    pub(crate) token: Option<Token>,
    pub(crate) number: u64,
    pub(crate) engine: Option<AgentEngine<SimStorage>>,
    pub(crate) model: AgentModel,
    /// The model before the last acknowledged append: what a silent fault may take us back to.
    pub(crate) before_last_write: AgentModel,
    /// The model if the unacknowledged write in flight did happen.
    pub(crate) in_doubt: Option<AgentModel>,
    /// The head after the last check: every later history must extend it.
    pub(crate) kept: Option<Fingerprint>,
    /// What the workload read since its last tracked write.
    pub(crate) session: Session,
    /// Whether the agent is encrypted: it opens only with its token, and its text must never
    /// be in any file.
    pub(crate) encrypted: bool,
    /// The sealed records of the copies of its segments taken before each Erase and compaction
    /// (encrypted agents only).
    pub(crate) archive: RecordArchive,
}

impl Slot {
    /// A just-created agent: nothing written, not open yet.
    pub(crate) fn new(name: String, token: Option<Token>, number: u64, encrypted: bool) -> Slot {
        Slot {
            name,
            token,
            number,
            encrypted,
            archive: RecordArchive::default(),
            engine: None,
            model: AgentModel::new(encrypted),
            before_last_write: AgentModel::new(encrypted),
            in_doubt: None,
            kept: None,
            session: Session::default(),
        }
    }
}

/// A store-level change whose outcome is unknown.
#[derive(Debug)]
pub(crate) enum StoreDoubt {
    Create { name: String },
    Delete { slot: Box<Slot> },
}

/// Relative weights of the workload steps; each seed draws its own.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Operation {
    AddLot,
    Remember,
    RememberInvalid,
    Batch,
    Recall,
    RecallAgain,
    Preview,
    Get,
    Verify,
    Compact,
    ReopenAgent,
    ReopenStore,
    CrashNow,
    CreateAgent,
    DeleteAgent,
    Tokens,
    TamperSegments,
    ForgeSnapshot,
    SetVector,
    Search,
}

impl Operation {
    pub(crate) const ALL: [Operation; 20] = [
        Operation::AddLot,
        Operation::Remember,
        Operation::RememberInvalid,
        Operation::Batch,
        Operation::Recall,
        Operation::RecallAgain,
        Operation::Preview,
        Operation::Get,
        Operation::Verify,
        Operation::Compact,
        Operation::ReopenAgent,
        Operation::ReopenStore,
        Operation::CrashNow,
        Operation::CreateAgent,
        Operation::DeleteAgent,
        Operation::Tokens,
        Operation::TamperSegments,
        Operation::ForgeSnapshot,
        Operation::SetVector,
        Operation::Search,
    ];

    /// The weight range a seed draws from, in tenths.
    fn weight_range(self) -> (u64, u64) {
        match self {
            Operation::AddLot => (100, 300),
            Operation::Remember => (100, 400),
            Operation::RememberInvalid => (0, 30),
            Operation::Batch => (20, 120),
            Operation::Recall => (40, 160),
            Operation::RecallAgain => (0, 30),
            Operation::Preview => (20, 80),
            Operation::Get => (20, 80),
            Operation::Verify => (5, 30),
            Operation::Compact => (5, 40),
            Operation::ReopenAgent => (5, 20),
            Operation::ReopenStore => (5, 25),
            Operation::CrashNow => (10, 50),
            Operation::CreateAgent => (2, 10),
            Operation::DeleteAgent => (0, 5),
            Operation::Tokens => (1, 5),
            Operation::TamperSegments => (0, 10),
            Operation::ForgeSnapshot => (0, 10),
            Operation::SetVector => (20, 120),
            Operation::Search => (10, 50),
        }
    }
}

/// Everything one run holds.
pub(crate) struct World {
    pub(crate) seed: u64,
    pub(crate) random: Random,
    pub(crate) storage: SimStorage,
    pub(crate) options: Options,
    pub(crate) store: Option<StoreEngine<SimStorage>>,
    pub(crate) agents: Vec<Slot>,
    pub(crate) store_doubt: Option<StoreDoubt>,
    pub(crate) weights: Vec<u64>,
    pub(crate) filler_max_bytes: u64,
    /// The trust level of each lot label, for the trust checks (a label missing is normal).
    pub(crate) trust_rules: BTreeMap<String, TrustLevel>,
    pub(crate) crash_point_chance: f64,
    pub(crate) recovery_crash_chance: f64,
    pub(crate) next_serial: u64,
    pub(crate) next_agent: u64,
    /// The serials of every content and vector handed to an encrypted agent: their markers must
    /// never be in any file.
    pub(crate) sealed_serials: BTreeSet<u64>,
    /// Encrypted agents whose create was never acknowledged but happened: without their token
    /// nobody can open them, so the workload leaves them alone (opening by number is refused).
    pub(crate) locked_agents: BTreeSet<String>,
    pub(crate) stats: RunStats,
    pub(crate) step: u64,
    /// Faults injected when the last full check passed: a clean reopen after none repairs nothing.
    pub(crate) faults_at_last_check: u64,
    /// Whether an attempt of the current reopen failed (a crash or an error during recovery):
    /// the report of the open that cut a torn write may then have been lost with it.
    pub(crate) recovery_interrupted: bool,
    /// Erased text was found only on the medium, where a lost write may have left it: the next
    /// step is a crash, after which the engine must report the damage or have erased the text.
    pub(crate) lost_write_to_judge: bool,
}

impl World {
    /// Runs a whole seed.
    pub(crate) fn run(config: &RunConfig, mut random: Random) -> RunOutcome {
        let plan = FaultPlan::draw(config.profile, &mut random);
        let storage = SimStorage::new(plan, random.fork());
        storage.echo_trace(super::trace_echo_requested());
        let mut world = World::new(config.seed, random, storage);
        let ended = world.run_steps(config.operations);
        let violation = match ended {
            Ok(()) => None,
            Err(Stop::Detected(_)) => {
                if world.stats.misdirected_losses == 0 && world.stats.lost_write_losses == 0 {
                    world.stats.corruption_detected += 1;
                }
                None
            }
            Err(Stop::Violation(message)) => {
                Some(Violation { message, step: world.step, recent_events: world.storage.recent_events() })
            }
        };
        RunOutcome {
            seed: config.seed,
            stats: world.stats.clone(),
            faults: world.storage.fault_counts(),
            trace_hash: world.storage.trace_hash(),
            clock_ticks: world.storage.clock_ticks(),
            violation,
        }
    }

    pub(crate) fn new(seed: u64, mut random: Random, storage: SimStorage) -> World {
        let weights = Operation::ALL
            .iter()
            .map(|operation| {
                let (low, high) = operation.weight_range();
                random.between(low, high)
            })
            .collect();
        let segment_size_max_bytes = match random.below(10) {
            0..=5 => 4096,
            6..=8 => 16 * 1024,
            _ => Options::default().segment_size_max_bytes,
        };
        // Snapshots off, frequent, or at the default interval.
        let snapshot_after_bytes =
            *random.pick(&[u64::MAX, 2048, 16 * 1024, Options::default().snapshot_after_bytes]).unwrap_or(&u64::MAX);
        // Preallocation off, or a few sectors or pages ahead (the default would make every
        // image of the simulated disk a quarter of a mebibyte).
        let preallocate_bytes = *random.pick(&[0, 512, 4096, 16 * 1024]).unwrap_or(&0);
        let filler_max_bytes = *random.pick(&[0, 64, 512, 512, 2048]).unwrap_or(&64);
        let crash_point_chance = random.between(2, 12) as f64 / 100.0;
        let recovery_crash_chance = random.between(0, 30) as f64 / 100.0;
        World {
            seed,
            random,
            storage,
            options: Options::default()
                .segment_size_max_bytes(segment_size_max_bytes)
                .snapshot_after_bytes(snapshot_after_bytes)
                .preallocate_bytes(preallocate_bytes)
                .auto_compact_dead_nodes(auto_compact_dead_nodes(seed)),
            store: None,
            agents: Vec::new(),
            store_doubt: None,
            weights,
            filler_max_bytes,
            trust_rules: trust_rules(seed),
            crash_point_chance,
            recovery_crash_chance,
            next_serial: 1,
            next_agent: 1,
            sealed_serials: BTreeSet::new(),
            locked_agents: BTreeSet::new(),
            stats: RunStats::default(),
            step: 0,
            faults_at_last_check: 0,
            recovery_interrupted: false,
            lost_write_to_judge: false,
        }
    }

    fn run_steps(&mut self, operations: u64) -> Step {
        self.start()?;
        while self.step < operations {
            self.step += 1;
            self.stats.operations += 1;
            self.one_step()?;
            if core::mem::take(&mut self.lost_write_to_judge) {
                self.stats.lost_writes_judged += 1;
                self.reopen(true)?;
            }
        }
        // Every run ends with a crash or a clean reopen and the full check.
        let crash = self.random.chance(0.5);
        self.reopen(crash)
    }

    /// Opens a fresh store with one or two agents, without faults (a run needs a start).
    pub(crate) fn start(&mut self) -> Step {
        self.storage.suspend_faults(true);
        let store = StoreEngine::open(self.storage.clone(), self.options.clone())
            .map_err(|error| Stop::Violation(format!("opening a new store failed: {error}")))?;
        self.store = Some(store);
        let agents = self.random.between(1, 2);
        for _ in 0..agents {
            self.create_agent()?;
        }
        self.storage.suspend_faults(false);
        self.faults_at_last_check = self.storage.fault_counts().total();
        Ok(())
    }

    fn one_step(&mut self) -> Step {
        if self.agents.is_empty() {
            return self.create_agent();
        }
        let operation = Operation::ALL.get(self.random.weighted(&self.weights)).copied().unwrap_or(Operation::AddLot);
        let agent = self.random.index(self.agents.len());
        let armed = self.random.chance(self.crash_point_chance);
        if armed {
            // The power goes after a random number of storage operations, usually inside this
            // step (its writes, syncs, renames), sometimes not at all.
            let countdown = self.random.below(48);
            self.storage.arm_crash(countdown);
        }
        self.storage.note("step", operation_name(operation), self.step);
        let result = self.perform(operation, agent).and_then(|()| match operation {
            // Only a recall leaves text for compaction to take out.
            Operation::Recall | Operation::RecallAgain => self.compact_while_due(agent),
            _ => Ok(()),
        });
        self.storage.disarm_crash();
        result
    }

    fn perform(&mut self, operation: Operation, agent: usize) -> Step {
        match operation {
            Operation::AddLot => self.add_lot(agent),
            Operation::Remember => self.remember(agent, false),
            Operation::RememberInvalid => self.remember(agent, true),
            Operation::Batch => self.batch(agent),
            Operation::Recall => self.recall(agent, false),
            Operation::RecallAgain => self.recall(agent, true),
            Operation::Preview => self.preview(agent),
            Operation::Get => self.get(agent),
            Operation::Verify => self.verify(agent),
            Operation::Compact => self.compact(agent),
            Operation::ReopenAgent => self.reopen_agent(agent),
            Operation::ReopenStore => self.reopen(false),
            Operation::CrashNow => self.reopen(true),
            Operation::CreateAgent => self.create_agent(),
            Operation::DeleteAgent => self.delete_agent(agent),
            Operation::Tokens => self.tokens(),
            Operation::TamperSegments => self.tamper_segments(agent),
            Operation::ForgeSnapshot => self.forge_snapshot(agent),
            Operation::SetVector => self.set_vector(agent),
            Operation::Search => self.search(agent),
        }
    }

    /// The slot of agent `index`.
    pub(crate) fn slot(&mut self, index: usize) -> Result<&mut Slot, Stop> {
        self.agents.get_mut(index).ok_or_else(|| Stop::Violation(format!("harness error: no agent {index}")))
    }

    /// The engine and the storage for agent `index`.
    pub(crate) fn engine(&mut self, index: usize) -> Result<(&mut AgentEngine<SimStorage>, SimStorage), Stop> {
        let storage = self.storage.clone();
        let slot = self.slot(index)?;
        let name = slot.name.clone();
        let engine =
            slot.engine.as_mut().ok_or_else(|| Stop::Violation(format!("harness error: agent {name} is not open")))?;
        Ok((engine, storage))
    }

    /// A fresh serial for a content or vector to be handed to agent `index`, noted when that
    /// agent is encrypted.
    pub(crate) fn next_serial_for(&mut self, index: usize) -> u64 {
        let serial = self.next_serial;
        self.next_serial += 1;
        if self.agents.get(index).is_some_and(|slot| slot.encrypted) {
            self.sealed_serials.insert(serial);
        }
        serial
    }

    /// A fresh content with a marker, for agent `index`.
    pub(crate) fn content(&mut self, index: usize) -> Vec<u8> {
        let serial = self.next_serial_for(index);
        crate::canary::content(self.seed, serial, self.filler_max_bytes, &mut self.random)
    }

    /// The engine reported corruption: right if a silent fault could have caused it.
    pub(crate) fn corruption(&mut self, error: &Error, during: &str) -> Step {
        if self.storage.fault_counts().silent() > 0 {
            Err(Stop::Detected(format!("{during}: {error}")))
        } else {
            Err(Stop::Violation(format!(
                "{during}: the engine reported corruption though no silent fault was injected: {error}"
            )))
        }
    }
}

/// How many recalled nodes with text start automatic compaction in a seed's world: off in a
/// quarter of the seeds, else after 1, 3 or 8. Taken from the seed, as the trust rules are.
fn auto_compact_dead_nodes(seed: u64) -> u64 {
    [0, 1, 3, 8].get((seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 61) as usize % 4).copied().unwrap_or(0)
}

/// The trust rules of a seed: each label low, normal, high or not named (so normal), by the
/// seed's digits in base 4. Taken from the seed, not drawn, so that the seed's draws stay as
/// they were.
fn trust_rules(seed: u64) -> BTreeMap<String, TrustLevel> {
    let mut digits = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut rules = BTreeMap::new();
    for label in LABELS {
        let level = match digits % 4 {
            0 => Some(TrustLevel::Low),
            1 => Some(TrustLevel::Normal),
            2 => Some(TrustLevel::High),
            _ => None,
        };
        digits /= 4;
        if let Some(level) = level {
            rules.insert(label.to_string(), level);
        }
    }
    rules
}

fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::AddLot => "add-lot",
        Operation::Remember => "remember",
        Operation::RememberInvalid => "remember-invalid",
        Operation::Batch => "batch",
        Operation::Recall => "recall",
        Operation::RecallAgain => "recall-again",
        Operation::Preview => "preview",
        Operation::Get => "get",
        Operation::Verify => "verify",
        Operation::Compact => "compact",
        Operation::ReopenAgent => "reopen-agent",
        Operation::ReopenStore => "reopen-store",
        Operation::CrashNow => "crash",
        Operation::CreateAgent => "create-agent",
        Operation::DeleteAgent => "delete-agent",
        Operation::Tokens => "tokens",
        Operation::TamperSegments => "tamper-segments",
        Operation::ForgeSnapshot => "forge-snapshot",
        Operation::SetVector => "set-vector",
        Operation::Search => "search",
    }
}
