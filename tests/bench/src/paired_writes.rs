//! Durable writes on two engines in paired rounds: each round both write the same nodes, one
//! call and one durable commit each, the side that goes first alternating. The ratio of the two
//! rates is taken round by round, so a change in the disk's flush time between rounds (this
//! machine's disk moves between two regimes) falls on both sides of each ratio.

use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::failure::Failure;
use crate::figures::median;
use crate::progress::Progress;
use crate::scenarios::rate;
use crate::workload::{PlannedNode, Workload};

/// How many rounds the writes are cut into, at most.
const ROUNDS_MAX: usize = 20;

/// What the paired rounds measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedWrites {
    /// Rounds made.
    pub rounds: usize,
    /// Writes by each side in each round.
    pub writes_per_round: usize,
    /// The first side's rate over all its rounds, writes per second.
    pub first_per_second: f64,
    /// The second side's rate over all its rounds, writes per second.
    pub second_per_second: f64,
    /// The first side's median write, in microseconds.
    pub first_median_microseconds: f64,
    /// The second side's median write, in microseconds.
    pub second_median_microseconds: f64,
    /// The median over the rounds of the second side's rate over the first's.
    pub round_ratio_median: f64,
}

impl PairedWrites {
    /// The median of each figure over several measurements.
    pub fn medians(all: &[PairedWrites]) -> Option<PairedWrites> {
        let first = all.first()?;
        let pick = |field: fn(&PairedWrites) -> f64| median(&mut all.iter().map(field).collect::<Vec<_>>());
        Some(PairedWrites {
            rounds: first.rounds,
            writes_per_round: first.writes_per_round,
            first_per_second: pick(|paired| paired.first_per_second),
            second_per_second: pick(|paired| paired.second_per_second),
            first_median_microseconds: pick(|paired| paired.first_median_microseconds),
            second_median_microseconds: pick(|paired| paired.second_median_microseconds),
            round_ratio_median: pick(|paired| paired.round_ratio_median),
        })
    }
}

/// Makes `total` durable writes on each of `first` and `second` in paired rounds, half lots and
/// half memories (background parents only, so every engine that ran the scenarios holds them).
pub fn measure(
    first: &mut dyn Engine,
    second: &mut dyn Engine,
    workload: &mut Workload,
    total: usize,
    progress: Progress,
) -> Result<PairedWrites, Failure> {
    let rounds = ROUNDS_MAX.min(total).max(1);
    let writes_per_round = (total / rounds).max(1);
    let phase = progress.phase("", "paired durable writes", Some((rounds * writes_per_round * 2) as u64));
    let mut busy = [Vec::with_capacity(rounds), Vec::with_capacity(rounds)];
    let mut latencies_microseconds = [Vec::new(), Vec::new()];
    let sides: [&mut dyn Engine; 2] = [first, second];
    for round in 0..rounds {
        let nodes: Vec<PlannedNode> = (0..writes_per_round)
            .map(|index| if index % 2 == 0 { workload.extra_lot() } else { workload.extra_memory() })
            .collect();
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut round_busy = [Duration::ZERO; 2];
        for side in order {
            for node in &nodes {
                let started = Instant::now();
                sides[side].write_one(node)?;
                let elapsed = started.elapsed();
                round_busy[side] += elapsed;
                latencies_microseconds[side].push(elapsed.as_secs_f64() * 1e6);
                phase.advance(1);
            }
        }
        for (side, spent) in round_busy.into_iter().enumerate() {
            busy[side].push(spent);
        }
    }
    let mut ratios: Vec<f64> = busy[0]
        .iter()
        .zip(&busy[1])
        .map(|(first, second)| first.as_secs_f64() / second.as_secs_f64().max(f64::MIN_POSITIVE))
        .collect();
    let whole = |side: usize| rate(rounds * writes_per_round, busy[side].iter().sum());
    let [first_latencies, second_latencies] = &mut latencies_microseconds;
    Ok(PairedWrites {
        rounds,
        writes_per_round,
        first_per_second: whole(0),
        second_per_second: whole(1),
        first_median_microseconds: median(first_latencies),
        second_median_microseconds: median(second_latencies),
        round_ratio_median: median(&mut ratios),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paired(ratio: f64) -> PairedWrites {
        PairedWrites {
            rounds: 20,
            writes_per_round: 100,
            first_per_second: 1_000.0,
            second_per_second: 1_000.0 * ratio,
            first_median_microseconds: 100.0,
            second_median_microseconds: 100.0 / ratio,
            round_ratio_median: ratio,
        }
    }

    #[test]
    fn medians_take_each_figure_apart() {
        let all = [paired(0.9), paired(1.1), paired(1.0)];
        let medians = PairedWrites::medians(&all).unwrap();
        assert_eq!(medians.round_ratio_median, 1.0);
        assert_eq!(medians.second_per_second, 1_000.0);
        assert!(PairedWrites::medians(&[]).is_none());
    }
}
