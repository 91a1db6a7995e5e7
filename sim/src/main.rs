//! `cheesedb-sim`: runs seeds of the deterministic simulation and reports what they found.
//!
//! Exits 0 when no seed broke a promise, 1 when one did (printing its seed and the command that
//! replays it), 2 on a usage error.

use std::process::ExitCode;
use std::time::Instant;

use cheesedb_sim::campaign::{run_campaign, CampaignConfig, CampaignSummary};
use cheesedb_sim::storage::FaultProfile;
use clap::Parser;

/// Deterministic simulation of cheesedb: crashes, power loss and disk faults, checked against a
/// reference model.
#[derive(Debug, Parser)]
#[command(name = "cheesedb-sim", version)]
struct Arguments {
    /// Run only this seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Run this many seeds, starting at --first.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// The first seed of --seeds.
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// Workload steps per seed.
    #[arg(long, default_value_t = 200)]
    ops: u64,
    /// Fault profile: none, light, heavy or swarm (each seed draws its own mix).
    #[arg(long, default_value = "swarm")]
    faults: String,
    /// Switch on a deliberate bug of the engine (needs a build with the `mutants` feature).
    #[arg(long)]
    mutant: Option<String>,
    /// List the deliberate bugs this build can switch on.
    #[arg(long)]
    list_mutants: bool,
    /// Threads to run seeds on (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Replay a workload whose choices are the bytes of this file (a fuzzer's input).
    #[arg(long, value_name = "FILE")]
    from_bytes: Option<std::path::PathBuf>,
    /// Run the threaded workload instead: the `cheesedb` crate's Store and Agent, writers on
    /// several threads sharing group commits, crashes and failed syncs (--seeds, --first).
    #[arg(long)]
    group_commit: bool,
}

/// Runs the threaded group-commit workload over `seeds` seeds from `first_seed`.
fn run_group_commit(first_seed: u64, seeds: u64) -> ExitCode {
    use cheesedb_sim::group_commit::{run_group_commit_campaign, GroupCommitConfig};
    let started = Instant::now();
    let outcome = run_group_commit_campaign(first_seed, seeds, GroupCommitConfig::default());
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok(stats) => {
            println!(
                "cheesedb-sim: group commit: seeds {seeds}, acknowledged writes {}, failed writes {} ({} of them stored after all), crashes {}, reopens {}, syncs while writing {}, wall time {seconds:.1} s",
                stats.acknowledged,
                stats.failed,
                stats.failed_but_stored,
                stats.crashes,
                stats.reopens,
                stats.syncs_while_writing,
            );
            ExitCode::SUCCESS
        }
        Err((seed, message)) => {
            println!("cheesedb-sim: group commit: VIOLATION in seed {seed}: {message}");
            println!(
                "cheesedb-sim: run again with: cheesedb-sim --group-commit --seed {seed} (threads may need a few runs)"
            );
            ExitCode::FAILURE
        }
    }
}

/// Replays a fuzzer's input with the simulation fuzz target's step count.
fn replay_bytes(path: &std::path::Path) -> ExitCode {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            eprintln!("cheesedb-sim: cannot read {}: {error}", path.display());
            return ExitCode::from(2);
        }
    };
    let outcome = cheesedb_sim::harness::run_from_bytes(&bytes, cheesedb_sim::harness::FUZZ_OPERATIONS);
    println!(
        "cheesedb-sim: {} operations, {} crashes, faults {}",
        outcome.stats.operations, outcome.stats.crashes, outcome.faults
    );
    match outcome.violation {
        Some(violation) => {
            println!("cheesedb-sim: VIOLATION at {violation}");
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}

#[cfg(feature = "mutants")]
fn mutant_names() -> Vec<&'static str> {
    cheesedb_core::mutants::Mutant::ALL.iter().map(|mutant| mutant.name()).collect()
}

#[cfg(not(feature = "mutants"))]
fn mutant_names() -> Vec<&'static str> {
    Vec::new()
}

#[cfg(feature = "mutants")]
fn activate_mutant(name: &str) -> Result<(), String> {
    let mutant = cheesedb_core::mutants::Mutant::from_name(name)
        .ok_or_else(|| format!("no mutant is named {name:?}; --list-mutants names them"))?;
    cheesedb_core::mutants::activate(Some(mutant));
    Ok(())
}

#[cfg(not(feature = "mutants"))]
fn activate_mutant(_name: &str) -> Result<(), String> {
    Err("this build has no mutants: build cheesedb-sim with --features mutants".to_string())
}

fn print_summary(summary: &CampaignSummary, seconds: f64) {
    let stats = &summary.stats;
    println!(
        "cheesedb-sim: seeds {}, operations {}, acknowledged writes {}, crashes {} (during recovery {}, during erase {}, during compaction {}), automatic compaction steps {}, reopens {}, unacknowledged writes kept {} lost {}, refusals checked {}, vectors set {}, searches checked {}, tracked writes {}, staged batches interleaved {}, trust levels checked {}, encrypted agents {}, erases on encrypted agents {}, key checks {}",
        summary.seeds,
        stats.operations,
        stats.acknowledged_writes,
        stats.crashes,
        stats.crashes_during_recovery,
        stats.crashes_during_erase,
        stats.crashes_during_compaction,
        stats.automatic_compaction_steps,
        stats.reopens,
        stats.unacknowledged_kept,
        stats.unacknowledged_lost,
        stats.refusals_checked,
        stats.vectors_set,
        stats.searches_checked,
        stats.tracked_writes,
        stats.staged_batches_interleaved,
        stats.trust_levels_checked,
        stats.encrypted_agents,
        stats.encrypted_erases,
        stats.key_checks,
    );
    println!(
        "cheesedb-sim: replication: runs {}, ships completed {} failed {}, shippers started {} fenced {}, second shipper writes {} fenced {}, heads checked {}, restores checked {}, follower steps {}, forged heads {} refused {}, lying heads refused {}, encrypted {}, object store faults {}",
        stats.replication_runs,
        stats.ships_completed,
        stats.ships_failed,
        stats.shipper_restarts,
        stats.shippers_fenced,
        stats.second_shipper_writes,
        stats.second_shipper_fenced,
        stats.replica_heads_checked,
        stats.restores_checked,
        stats.follower_steps,
        stats.forged_heads,
        stats.forged_heads_refused,
        stats.lying_heads_refused,
        stats.encrypted_replicas,
        stats.bucket_faults,
    );
    println!(
        "cheesedb-sim: spaces: runs {}, checks {}, recalls cut by a crash {}",
        stats.space_runs, stats.space_checks, stats.crashes_during_space_recalls,
    );
    println!("cheesedb-sim: faults injected {} ({})", summary.faults.total(), summary.faults);
    println!(
        "cheesedb-sim: failures reported {}, corruption detected {}, silent losses reported {}, losses to misdirected writes {}, losses to lost writes {}, lost writes judged after a crash {}, violations {}, virtual time {} ticks, trace hash {:016x}, wall time {seconds:.1} s",
        stats.failures_reported,
        stats.corruption_detected,
        stats.silent_losses_reported,
        stats.misdirected_losses,
        stats.lost_write_losses,
        stats.lost_writes_judged,
        summary.violations.len(),
        summary.clock_ticks,
        summary.combined_trace_hash,
    );
}

fn main() -> ExitCode {
    let arguments = Arguments::parse();
    if arguments.list_mutants {
        let names = mutant_names();
        if names.is_empty() {
            println!("this build has no mutants (build with --features mutants)");
        }
        for name in names {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }
    if let Some(path) = &arguments.from_bytes {
        return replay_bytes(path);
    }
    let Some(profile) = FaultProfile::from_name(&arguments.faults) else {
        let names: Vec<&str> = FaultProfile::ALL.iter().map(|profile| profile.name()).collect();
        eprintln!("cheesedb-sim: unknown fault profile {:?} (one of {})", arguments.faults, names.join(", "));
        return ExitCode::from(2);
    };
    if let Some(name) = &arguments.mutant {
        if let Err(message) = activate_mutant(name) {
            eprintln!("cheesedb-sim: {message}");
            return ExitCode::from(2);
        }
    }
    let (first_seed, seeds) = match arguments.seed {
        Some(seed) => (seed, 1),
        None => (arguments.first, arguments.seeds),
    };
    if arguments.group_commit {
        return run_group_commit(first_seed, seeds);
    }
    let jobs = arguments.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |count| count.get()));
    let config = CampaignConfig {
        first_seed,
        seeds,
        operations: arguments.ops,
        profile,
        jobs,
        stop_at_first_violation: arguments.mutant.is_some(),
    };
    let started = Instant::now();
    let summary = run_campaign(&config);
    let seconds = started.elapsed().as_secs_f64();
    for (seed, violation) in &summary.violations {
        let mutant = arguments.mutant.as_ref().map(|name| format!(" --mutant {name}")).unwrap_or_default();
        println!("cheesedb-sim: VIOLATION in seed {seed} at {violation}");
        println!(
            "cheesedb-sim: replay with: cheesedb-sim --seed {seed} --ops {} --faults {}{mutant}",
            arguments.ops,
            profile.name()
        );
    }
    print_summary(&summary, seconds);
    match (&arguments.mutant, summary.violations.first()) {
        (Some(name), Some((seed, _))) => {
            println!("cheesedb-sim: mutant {name} caught by seed {seed}");
            ExitCode::FAILURE
        }
        (Some(name), None) => {
            println!("cheesedb-sim: mutant {name} NOT caught in {} seeds", summary.seeds);
            ExitCode::SUCCESS
        }
        (None, Some(_)) => ExitCode::FAILURE,
        (None, None) => {
            println!("simulation: {} passed, 0 failed", summary.seeds);
            ExitCode::SUCCESS
        }
    }
}
