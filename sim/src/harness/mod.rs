//! The harness: random workloads driven through the real engine on a [`SimStorage`], checked
//! against the [`model`](crate::model) after every step, every crash and every reopen; every
//! check includes searches, whose results must be the model's.
//!
//! A run is one seed. The seed chooses the fault probabilities, the mix of operations, the size
//! of contents and segments, and every single choice after that; the same seed replays the same
//! run exactly (the trace hash proves it). A run ends after its operations, at the first
//! violation, or when the engine reports corruption caused by a silent fault (a bit flip, a
//! misdirected write or a lost write): reporting it is the right answer, and nothing can continue
//! on that store.

mod checks;
mod labels;
pub mod markers;
mod operations;
mod recovery;
mod replication;
mod sealed;
mod search;
mod session;
mod spaces;
mod stop;
mod tamper;
mod vectors;
mod world;

use std::fmt;

use crate::random::Random;
use crate::storage::{FaultCounts, FaultProfile};

pub use world::Stop;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    /// The seed.
    pub seed: u64,
    /// Workload steps.
    pub operations: u64,
    /// How each seed draws its fault probabilities.
    pub profile: FaultProfile,
}

/// What a run did, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Workload steps taken.
    pub operations: u64,
    /// Writes the engine acknowledged (lots, memories, batches, recalls, compactions, agents).
    pub acknowledged_writes: u64,
    /// Calls the engine refused with the error the model expected.
    pub refusals_checked: u64,
    /// Crashes (power cuts), in all.
    pub crashes: u64,
    /// Crashes while the engine was opening and recovering.
    pub crashes_during_recovery: u64,
    /// Crashes during a recall with Erase (in the append or the rewrite).
    pub crashes_during_erase: u64,
    /// Crashes during a compaction.
    pub crashes_during_compaction: u64,
    /// Steps of automatic compaction acknowledged (one segment rewritten each).
    pub automatic_compaction_steps: u64,
    /// Reopens of the whole store (after a crash or cleanly), each followed by a full check.
    pub reopens: u64,
    /// Unacknowledged writes found complete after a reopen.
    pub unacknowledged_kept: u64,
    /// Unacknowledged writes found absent after a reopen.
    pub unacknowledged_lost: u64,
    /// Storage errors the engine passed on (and then refused writes as poisoned).
    pub failures_reported: u64,
    /// Silent damage the engine reported as corruption (ends the run).
    pub corruption_detected: u64,
    /// Silent damage that cost the last acknowledged write, cut by open and reported in its
    /// `Report` (the engine cannot tell it from a torn write).
    pub silent_losses_reported: u64,
    /// Runs ended because a misdirected write lost acknowledged data the engine could not see
    /// (it never reads back what it wrote); see docs/SIMULATION.md.
    pub misdirected_losses: u64,
    /// Runs ended because a lost write (a stale sector the disk acknowledged) cost acknowledged
    /// data: the engine never reads back what it wrote, so it cannot see one until a crash.
    pub lost_write_losses: u64,
    /// Lost writes judged after a crash: erased text that only the medium still held, which the
    /// engine then had to report as damage or erase again.
    pub lost_writes_judged: u64,
    /// Searches (keyword, vector and hybrid) whose results were compared with the model's.
    pub searches_checked: u64,
    /// Vectors the engine acknowledged (alone or in a batch).
    pub vectors_set: u64,
    /// Memories written with a read set (alone or in a batch), acknowledged or refused as the
    /// model expected.
    pub tracked_writes: u64,
    /// Staged batches that had a recall or another write between two of their steps, and went
    /// on to their commit.
    pub staged_batches_interleaved: u64,
    /// Trust levels compared with the model's.
    pub trust_levels_checked: u64,
    /// Encrypted agents created (acknowledged).
    pub encrypted_agents: u64,
    /// Key checks of encrypted agents: erased nodes unreadable with the token, now and in the
    /// copies taken before, and (after a reopen) every readable node opening to its content.
    pub key_checks: u64,
    /// Recalls with Erase acknowledged on encrypted agents.
    pub encrypted_erases: u64,
    /// Runs with a replication part (see `replication.rs`).
    pub replication_runs: u64,
    /// Ships of the primary's shipper that completed with nothing left to delete.
    pub ships_completed: u64,
    /// Ships cut short by the object store's faults.
    pub ships_failed: u64,
    /// Shippers started (the first, and after every crash of the shipper or its store).
    pub shipper_restarts: u64,
    /// Times the primary's shipper found the head moved and stopped.
    pub shippers_fenced: u64,
    /// Ships of a second, racing shipper that went through.
    pub second_shipper_writes: u64,
    /// Ships of a second, racing shipper that found the head moved and stopped.
    pub second_shipper_fenced: u64,
    /// Bucket heads checked against the primary's log, with every object they name.
    pub replica_heads_checked: u64,
    /// Restores of the bucket into a fresh store, verified to the head.
    pub restores_checked: u64,
    /// Follower steps checked against the primary's log.
    pub follower_steps: u64,
    /// Forged heads (a forked copy's history) put in the bucket.
    pub forged_heads: u64,
    /// Forged heads the follower refused as corrupt.
    pub forged_heads_refused: u64,
    /// Faults the simulated object store injected (lying LIST answers and heads included).
    pub bucket_faults: u64,
    /// Replication parts whose agent was encrypted.
    pub encrypted_replicas: u64,
    /// Heads lying about their grant that a restore and the follower refused.
    pub lying_heads_refused: u64,
    /// Runs with a spaces part (see `spaces.rs`).
    pub space_runs: u64,
    /// Recalls in a space cut by a power loss, in the space's write or a member's part.
    pub crashes_during_space_recalls: u64,
    /// Checks of every node of a space and of its members against the model of spaces.
    pub space_checks: u64,
}

impl RunStats {
    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &RunStats) {
        self.operations += other.operations;
        self.acknowledged_writes += other.acknowledged_writes;
        self.refusals_checked += other.refusals_checked;
        self.crashes += other.crashes;
        self.crashes_during_recovery += other.crashes_during_recovery;
        self.crashes_during_erase += other.crashes_during_erase;
        self.crashes_during_compaction += other.crashes_during_compaction;
        self.automatic_compaction_steps += other.automatic_compaction_steps;
        self.reopens += other.reopens;
        self.unacknowledged_kept += other.unacknowledged_kept;
        self.unacknowledged_lost += other.unacknowledged_lost;
        self.failures_reported += other.failures_reported;
        self.corruption_detected += other.corruption_detected;
        self.silent_losses_reported += other.silent_losses_reported;
        self.misdirected_losses += other.misdirected_losses;
        self.lost_write_losses += other.lost_write_losses;
        self.lost_writes_judged += other.lost_writes_judged;
        self.searches_checked += other.searches_checked;
        self.vectors_set += other.vectors_set;
        self.tracked_writes += other.tracked_writes;
        self.staged_batches_interleaved += other.staged_batches_interleaved;
        self.trust_levels_checked += other.trust_levels_checked;
        self.encrypted_agents += other.encrypted_agents;
        self.key_checks += other.key_checks;
        self.encrypted_erases += other.encrypted_erases;
        self.replication_runs += other.replication_runs;
        self.ships_completed += other.ships_completed;
        self.ships_failed += other.ships_failed;
        self.shipper_restarts += other.shipper_restarts;
        self.shippers_fenced += other.shippers_fenced;
        self.second_shipper_writes += other.second_shipper_writes;
        self.second_shipper_fenced += other.second_shipper_fenced;
        self.replica_heads_checked += other.replica_heads_checked;
        self.restores_checked += other.restores_checked;
        self.follower_steps += other.follower_steps;
        self.forged_heads += other.forged_heads;
        self.forged_heads_refused += other.forged_heads_refused;
        self.bucket_faults += other.bucket_faults;
        self.encrypted_replicas += other.encrypted_replicas;
        self.lying_heads_refused += other.lying_heads_refused;
        self.space_runs += other.space_runs;
        self.crashes_during_space_recalls += other.crashes_during_space_recalls;
        self.space_checks += other.space_checks;
    }
}

/// A broken promise of the engine (or of the harness itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What was wrong.
    pub message: String,
    /// The workload step at which it was found.
    pub step: u64,
    /// The last storage events before it.
    pub recent_events: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "step {}: {}\nlast storage events:\n{}", self.step, self.message, self.recent_events)
    }
}

/// How one run went.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The seed.
    pub seed: u64,
    /// What it did.
    pub stats: RunStats,
    /// The faults the disk injected.
    pub faults: FaultCounts,
    /// The hash of the whole trace: equal for two runs of one seed.
    pub trace_hash: u64,
    /// Virtual time the run took.
    pub clock_ticks: u64,
    /// The first broken promise, if any.
    pub violation: Option<Violation>,
}

/// Runs one seed.
pub fn run_seed(config: &RunConfig) -> RunOutcome {
    let mut outcome = world::World::run(config, Random::seeded(config.seed));
    if outcome.violation.is_none() && replication::chosen(config.seed) {
        if let Err(message) = replication::run(config.seed, &mut outcome.stats) {
            outcome.violation = Some(Violation {
                message: format!("replication: {message}"),
                step: config.operations,
                recent_events: String::new(),
            });
        }
    }
    if outcome.violation.is_none() && spaces::chosen(config.seed) {
        if let Err(message) = spaces::run(config.seed, &mut outcome.stats) {
            outcome.violation = Some(Violation {
                message: format!("spaces: {message}"),
                step: config.operations,
                recent_events: String::new(),
            });
        }
    }
    outcome
}

/// The environment variable that, when set, prints every event of a run's trace to standard
/// error (see [`SimStorage::echo_trace`](crate::storage::SimStorage::echo_trace)).
pub const TRACE_ECHO_VARIABLE: &str = "CHEESEDB_SIM_ECHO";

/// Whether the person running the simulator asked to see every trace event.
pub fn trace_echo_requested() -> bool {
    std::env::var_os(TRACE_ECHO_VARIABLE).is_some()
}

/// Workload steps of one fuzzer input.
pub const FUZZ_OPERATIONS: u64 = 48;

/// Runs a workload whose every choice is read from `bytes` (for the fuzzer).
pub fn run_from_bytes(bytes: &[u8], operations: u64) -> RunOutcome {
    let config = RunConfig { seed: 0, operations, profile: FaultProfile::Swarm };
    world::World::run(&config, Random::from_bytes(bytes))
}
