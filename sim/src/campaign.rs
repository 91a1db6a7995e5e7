//! A campaign: many seeds, run on several threads, and their counts added up.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::harness::{run_seed, RunConfig, RunOutcome, RunStats, Violation};
use crate::storage::{FaultCounts, FaultProfile};

/// What to run.
#[derive(Debug, Clone)]
pub struct CampaignConfig {
    /// The first seed.
    pub first_seed: u64,
    /// How many seeds.
    pub seeds: u64,
    /// Workload steps per seed.
    pub operations: u64,
    /// How each seed draws its faults.
    pub profile: FaultProfile,
    /// Threads to run seeds on.
    pub jobs: usize,
    /// Stop at the first violation (when hunting with a mutant).
    pub stop_at_first_violation: bool,
}

/// The counts of a campaign.
#[derive(Debug, Clone, Default)]
pub struct CampaignSummary {
    /// Seeds run.
    pub seeds: u64,
    /// Every run's counts, added up.
    pub stats: RunStats,
    /// Faults injected, by kind.
    pub faults: FaultCounts,
    /// Virtual time of all runs.
    pub clock_ticks: u64,
    /// The seeds that broke a promise, with what they found, in seed order.
    pub violations: Vec<(u64, Violation)>,
    /// The trace hash of every seed, combined in seed order.
    pub combined_trace_hash: u64,
}

/// Runs one seed, turning a panic into a violation.
pub fn run_guarded(config: &RunConfig) -> RunOutcome {
    match catch_unwind(AssertUnwindSafe(|| run_seed(config))) {
        Ok(outcome) => outcome,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|text| text.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            RunOutcome {
                seed: config.seed,
                stats: RunStats::default(),
                faults: FaultCounts::default(),
                trace_hash: 0,
                clock_ticks: 0,
                violation: Some(Violation {
                    message: format!("panic: {message}"),
                    step: 0,
                    recent_events: String::new(),
                }),
            }
        }
    }
}

/// Runs every seed of `config` and adds up the counts.
pub fn run_campaign(config: &CampaignConfig) -> CampaignSummary {
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let outcomes: Mutex<Vec<RunOutcome>> = Mutex::new(Vec::new());
    let jobs = config.jobs.max(1);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= config.seeds {
                    break;
                }
                let run = RunConfig {
                    seed: config.first_seed + index,
                    operations: config.operations,
                    profile: config.profile,
                };
                let outcome = run_guarded(&run);
                if outcome.violation.is_some() && config.stop_at_first_violation {
                    stop.store(true, Ordering::Relaxed);
                }
                if let Ok(mut outcomes) = outcomes.lock() {
                    outcomes.push(outcome);
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|outcome| outcome.seed);
    summarize(&outcomes)
}

/// Adds up the outcomes (in seed order).
pub fn summarize(outcomes: &[RunOutcome]) -> CampaignSummary {
    let mut summary = CampaignSummary::default();
    let mut hash = crate::trace::TraceHash::default();
    for outcome in outcomes {
        summary.seeds += 1;
        summary.stats.merge(&outcome.stats);
        summary.faults.merge(&outcome.faults);
        summary.clock_ticks += outcome.clock_ticks;
        hash.add(&outcome.trace_hash.to_le_bytes());
        if let Some(violation) = &outcome.violation {
            summary.violations.push((outcome.seed, violation.clone()));
        }
    }
    summary.combined_trace_hash = hash.value();
    summary
}
