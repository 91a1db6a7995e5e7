//! A workload that drives the `cheesedb` crate's `Store` and `Agent` (several threads writing to
//! one agent through its group commit) over the simulated disk, with crashes and failed syncs.
//!
//! Threads make the interleaving, and so the exact run, depend on the scheduler: a seed fixes the
//! faults and the workload, not the order of events, so a failing seed may need a few runs to
//! fail again. What is checked after each crash does not depend on the order: every write
//! acknowledged to a thread is there with its content, no id was handed out twice, the ids are
//! dense from 1, every node holds the content of a write some thread attempted (an unacknowledged
//! write may be there or not, never twice), and `verify` passes.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb::{Agent, Error, Id, Leg, Options, Store, Token};

use crate::random::Random;
use crate::storage::{FaultPlan, SimStorage};

/// What one seed of the workload did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Writes acknowledged to a thread.
    pub acknowledged: u64,
    /// Writes that failed (the crash, a failed sync, or the agent poisoned after one).
    pub failed: u64,
    /// Writes that failed but were found after the reopen.
    pub failed_but_stored: u64,
    /// Crashes (power cuts during a round).
    pub crashes: u64,
    /// Reopens, each followed by the full check.
    pub reopens: u64,
    /// File syncs made while the threads wrote: fewer than the writes when writes were grouped.
    pub syncs_while_writing: u64,
}

impl GroupCommitStats {
    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &GroupCommitStats) {
        self.acknowledged += other.acknowledged;
        self.failed += other.failed;
        self.failed_but_stored += other.failed_but_stored;
        self.crashes += other.crashes;
        self.reopens += other.reopens;
        self.syncs_while_writing += other.syncs_while_writing;
    }
}

/// How big a seed is.
#[derive(Debug, Clone, Copy)]
pub struct GroupCommitConfig {
    /// Writer threads.
    pub threads: u64,
    /// Rounds; each ends with a crash or a clean reopen.
    pub rounds: u64,
    /// Writes each thread attempts per round.
    pub writes_per_round: u64,
}

impl Default for GroupCommitConfig {
    fn default() -> GroupCommitConfig {
        GroupCommitConfig { threads: 4, rounds: 6, writes_per_round: 12 }
    }
}

/// The real time each sync takes: long enough for the other writers to queue behind it.
const SYNC_PAUSE: std::time::Duration = std::time::Duration::from_micros(500);

/// What one thread's write was, and what it got back.
#[derive(Debug, Clone)]
struct Attempt {
    content: Vec<u8>,
    result: Result<Id, Error>,
}

/// Runs one seed; `Err` describes the first broken promise.
pub fn run_group_commit_seed(seed: u64, config: GroupCommitConfig) -> Result<GroupCommitStats, String> {
    let mut random = Random::seeded(seed);
    let mut plan = FaultPlan::none();
    plan.sync_failed = *random.pick(&[0.0, 0.0, 0.01, 0.05]).unwrap_or(&0.0);
    let storage = SimStorage::new(plan, random.fork());
    storage.echo_trace(crate::harness::trace_echo_requested());
    storage.set_sync_pause(SYNC_PAUSE);
    let options = Options::default()
        .segment_size_max_bytes(*random.pick(&[4096, 16 * 1024]).unwrap_or(&4096))
        .preallocate_bytes(*random.pick(&[0, 512, 4096]).unwrap_or(&0))
        .snapshot_after_bytes(*random.pick(&[u64::MAX, 4096]).unwrap_or(&u64::MAX));
    let mut stats = GroupCommitStats::default();
    storage.suspend_faults(true);
    let store = Store::open_with(storage.clone(), options.clone()).map_err(|error| format!("open: {error}"))?;
    let token = store.create_agent("writers").map_err(|error| format!("create: {error}"))?;
    drop(store);
    storage.suspend_faults(false);
    // Every write ever acknowledged, by id; every content ever attempted.
    let mut acknowledged: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut attempted: BTreeSet<Vec<u8>> = BTreeSet::new();
    for round in 0..config.rounds {
        let (store, agent) = open(&storage, &options, &token)?;
        let roots = agent.lots().map_err(|error| format!("lots: {error}"))?;
        // A crash somewhere in the round, most rounds; the rest end cleanly.
        let crash = random.chance(0.7);
        if crash {
            storage.arm_crash(random.below(config.threads * config.writes_per_round * 4));
        }
        let syncs_before = storage.file_syncs();
        let writers: Vec<_> = (0..config.threads)
            .map(|thread| {
                let agent = agent.clone();
                let roots = roots.clone();
                let writes = config.writes_per_round;
                let thread_seed = random.next_u64();
                std::thread::spawn(move || write_round(&agent, seed, round, thread, writes, &roots, thread_seed))
            })
            .collect();
        for writer in writers {
            let attempts = writer.join().map_err(|_| "a writer thread panicked".to_string())?;
            for attempt in attempts {
                attempted.insert(attempt.content.clone());
                match attempt.result {
                    Ok(id) => {
                        stats.acknowledged += 1;
                        if let Some(earlier) = acknowledged.insert(id.get(), attempt.content) {
                            return Err(format!("id {id} acknowledged twice (first for {} bytes)", earlier.len()));
                        }
                    }
                    Err(_) => stats.failed += 1,
                }
            }
        }
        stats.syncs_while_writing += storage.file_syncs() - syncs_before;
        storage.disarm_crash();
        drop((agent, store));
        if crash || storage.is_powered_off() {
            storage.crash();
            stats.crashes += 1;
        }
        stats.reopens += 1;
        storage.suspend_faults(true);
        let checked = check(&storage, &options, &token, &acknowledged, &attempted);
        storage.suspend_faults(false);
        let stored = checked?;
        stats.failed_but_stored += stored.saturating_sub(acknowledged.len() as u64);
        // What the disk kept is as good as acknowledged from now on: the engine serves it.
        let (store, agent) = open(&storage, &options, &token)?;
        for id in 1..=stored {
            if let Some(content) = agent.get(Id::from(id)).ok().and_then(|node| node.content().map(<[u8]>::to_vec)) {
                acknowledged.entry(id).or_insert(content);
            }
        }
        drop((agent, store));
    }
    Ok(stats)
}

fn open(
    storage: &SimStorage,
    options: &Options,
    token: &Token,
) -> Result<(Store<SimStorage>, Agent<SimStorage>), String> {
    storage.suspend_faults(true);
    let opened = Store::open_with(storage.clone(), options.clone())
        .and_then(|store| store.open_agent(token).map(|agent| (store, agent)))
        .map_err(|error| format!("reopening: {error}"));
    storage.suspend_faults(false);
    opened
}

/// One thread's writes in one round: lots, and memories learned from the lots there were at the
/// start of the round (alive for good: nothing is recalled here). Stops at the first failure,
/// as a careful client would, since the agent is poisoned from then on.
fn write_round(
    agent: &Agent<SimStorage>,
    seed: u64,
    round: u64,
    thread: u64,
    writes: u64,
    roots: &[Id],
    thread_seed: u64,
) -> Vec<Attempt> {
    let mut random = Random::seeded(thread_seed);
    let mut attempts = Vec::new();
    for write in 0..writes {
        let filler = "x".repeat(random.below(300) as usize);
        let content = format!("<g:{seed}:{round}:{thread}:{write}>{filler}").into_bytes();
        let result = match random.pick(roots) {
            Some(root) if random.chance(0.5) => agent.remember(&content, &[Leg::from([*root])]),
            _ => agent.add_lot("thread", &content),
        };
        let failed = result.is_err();
        attempts.push(Attempt { content, result });
        if failed {
            break;
        }
    }
    attempts
}

/// Reopens and checks everything; returns how many nodes the agent holds.
fn check(
    storage: &SimStorage,
    options: &Options,
    token: &Token,
    acknowledged: &BTreeMap<u64, Vec<u8>>,
    attempted: &BTreeSet<Vec<u8>>,
) -> Result<u64, String> {
    let (_store, agent) = open(storage, options, token)?;
    let lots = agent.lots().map_err(|error| format!("lots: {error}"))?;
    let memories = agent.memories().map_err(|error| format!("memories: {error}"))?;
    let count = (lots.len() + memories.len()) as u64;
    let mut ids: Vec<u64> = lots.iter().chain(&memories).map(|id| id.get()).collect();
    ids.sort_unstable();
    if ids != (1..=count).collect::<Vec<u64>>() {
        return Err(format!("the ids are not dense from 1: {} nodes, the highest {:?}", count, ids.last()));
    }
    let mut seen = BTreeSet::new();
    for id in 1..=count {
        let node = agent.get(Id::from(id)).map_err(|error| format!("get {id}: {error}"))?;
        let content = node.content().ok_or_else(|| format!("node {id} has no content"))?;
        if !attempted.contains(content) {
            return Err(format!("node {id} holds a content no thread wrote"));
        }
        if !seen.insert(content.to_vec()) {
            return Err(format!("node {id} holds a content stored twice"));
        }
        if let Some(expected) = acknowledged.get(&id) {
            if expected.as_slice() != content {
                return Err(format!("node {id} changed its content"));
            }
        }
    }
    if let Some((id, _)) = acknowledged.range(count + 1..).next() {
        return Err(format!("acknowledged id {id} is gone (the agent holds {count} nodes)"));
    }
    if agent.get(Id::from(count + 1)).is_ok() {
        return Err(format!("a node past the last id {count}"));
    }
    agent.verify().map_err(|error| format!("verify: {error}"))?;
    Ok(count)
}

/// Runs `seeds` seeds from `first_seed`, one after the other; the first broken promise ends it.
pub fn run_group_commit_campaign(
    first_seed: u64,
    seeds: u64,
    config: GroupCommitConfig,
) -> Result<GroupCommitStats, (u64, String)> {
    let mut total = GroupCommitStats::default();
    for seed in first_seed..first_seed + seeds {
        let stats = run_group_commit_seed(seed, config).map_err(|message| (seed, message))?;
        total.merge(&stats);
    }
    Ok(total)
}
