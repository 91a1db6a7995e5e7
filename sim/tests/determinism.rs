//! Same seed, same run: the whole trace (every storage operation, fault and crash) hashes the
//! same twice, and different seeds differ.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use cheesedb_sim::harness::{run_seed, RunConfig};
use cheesedb_sim::storage::FaultProfile;

#[test]
fn a_seed_replays_the_same_run_exactly() {
    let mut hashes = Vec::new();
    for seed in 0..24 {
        let config = RunConfig { seed, operations: 120, profile: FaultProfile::Swarm };
        let first = run_seed(&config);
        let second = run_seed(&config);
        assert_eq!(first.trace_hash, second.trace_hash, "seed {seed}");
        assert_eq!(first.stats, second.stats, "seed {seed}");
        assert_eq!(first.faults, second.faults, "seed {seed}");
        assert_eq!(first.clock_ticks, second.clock_ticks, "seed {seed}");
        assert!(first.violation.is_none(), "seed {seed}: {}", first.violation.unwrap());
        hashes.push(first.trace_hash);
    }
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 24, "different seeds must give different runs");
}
