//! `cheesedb-bench --uniform-graph`: recall on a second shape of graph, so that no ratio rests
//! on the layout of the graph section alone.
//!
//! The background: of a million nodes, one in ten (drawn at random) is a lot and the rest are
//! memories with 1 to 3 legs of 1 to 3 parents, drawn uniformly from every earlier node. Then two
//! subgraphs, one after the other: each a new lot, then 10,000 memories with one leg of 1 or 2
//! parents drawn from that lot and the subgraph's earlier memories. Where the graph section
//! scatters a family over the whole history, a subgraph here is one run of consecutive ids.
//!
//! Timed, on each engine (cheesedb, and SQLite when built with `sqlite` and compared): the dry
//! run and the recall of the first subgraph's lot, Fair; then the same of the second's, Strict.
//! Untrusted both. Each recall must remove its whole subgraph, or the run fails.

use std::time::{Duration, Instant};

use cheesedb::{Io, Mode, Removal};
use fastrand::Rng;
use serde_json::json;

use crate::cheesedb_side::{CheesedbSide, OpenMeasurement};
use crate::engine::Engine;
use crate::failure::Failure;
use crate::figures::median;
use crate::folder::BenchFolder;
use crate::output::Printer;
use crate::workload::PlannedNode;

/// How many nodes of each part.
#[derive(Debug, Clone, Copy)]
pub struct UniformSize {
    /// Lots and memories before the subgraphs.
    pub background: u64,
    /// Memories of each of the two subgraphs (besides its lot).
    pub subgraph_memories: u64,
}

/// The size the targets name.
pub const FULL: UniformSize = UniformSize { background: 1_000_000, subgraph_memories: 10_000 };
/// A size that only shows every step works.
pub const SMOKE: UniformSize = UniformSize { background: 2_000, subgraph_memories: 200 };

/// Nodes written in one durable batch at setup.
const SETUP_BATCH_NODES: usize = 10_000;
/// The seed of the data: every engine and every run get the same graph.
const SEED: u64 = 0x5eed_0002;

/// What one engine took for the four timed calls.
#[derive(Debug, Clone, Copy, Default)]
struct RecallTimes {
    fair_dry_run: Duration,
    fair: Duration,
    strict_dry_run: Duration,
    strict: Duration,
}

impl RecallTimes {
    fn each(&self) -> [(&'static str, Duration); 4] {
        [
            ("dry run, Fair", self.fair_dry_run),
            ("recall, Fair", self.fair),
            ("dry run, Strict", self.strict_dry_run),
            ("recall, Strict", self.strict),
        ]
    }
}

/// The graph, handed out in batches: ids run from 1 in the order the nodes come.
struct UniformGraph {
    size: UniformSize,
    random: Rng,
    next_id: u64,
    /// The two subgraphs' lots, once handed out.
    lots: Vec<u64>,
    /// The current subgraph's lot and memories so far: the parents its next memory may name.
    subgraph: Vec<u64>,
}

impl UniformGraph {
    fn new(size: UniformSize) -> UniformGraph {
        UniformGraph { size, random: Rng::with_seed(SEED), next_id: 1, lots: Vec::new(), subgraph: Vec::new() }
    }

    fn total(&self) -> u64 {
        self.size.background + 2 * (1 + self.size.subgraph_memories)
    }

    /// The next nodes, at most `count_max`; empty at the end.
    fn next_batch(&mut self, count_max: usize) -> Vec<PlannedNode> {
        let mut batch = Vec::with_capacity(count_max);
        while batch.len() < count_max && self.next_id <= self.total() {
            let node = self.next_node();
            batch.push(node);
            self.next_id += 1;
        }
        batch
    }

    fn next_node(&mut self) -> PlannedNode {
        let id = self.next_id;
        let subgraph_length = 1 + self.size.subgraph_memories;
        if id > self.size.background {
            let place = (id - self.size.background - 1) % subgraph_length;
            if place == 0 {
                self.lots.push(id);
                self.subgraph = vec![id];
                return lot(id);
            }
            let parents = self.random.usize(1..=2).min(self.subgraph.len());
            let leg = distinct(&mut self.random, parents, |random| self.subgraph[random.usize(..self.subgraph.len())]);
            self.subgraph.push(id);
            return memory(id, vec![leg]);
        }
        if id == 1 || self.random.u8(0..10) == 0 {
            return lot(id);
        }
        let legs = (0..self.random.usize(1..=3))
            .map(|_| {
                let parents = self.random.usize(1..=3).min(id as usize - 1);
                distinct(&mut self.random, parents, |random| random.u64(1..id))
            })
            .collect();
        memory(id, legs)
    }
}

/// `count` distinct values drawn with `draw`.
fn distinct(random: &mut Rng, count: usize, draw: impl Fn(&mut Rng) -> u64) -> Vec<u64> {
    let mut values = Vec::with_capacity(count);
    while values.len() < count {
        let value = draw(random);
        if !values.contains(&value) {
            values.push(value);
        }
    }
    values
}

fn lot(id: u64) -> PlannedNode {
    PlannedNode::Lot { label: "web_page", content: format!("source {id} of the uniform graph").into_bytes() }
}

fn memory(id: u64, legs: Vec<Vec<u64>>) -> PlannedNode {
    PlannedNode::Memory { content: format!("memory {id} of the uniform graph").into_bytes(), legs }
}

/// Writes the graph into `engine`; returns the two subgraphs' lots.
fn build(engine: &mut dyn Engine, size: UniformSize) -> Result<[u64; 2], Failure> {
    let mut graph = UniformGraph::new(size);
    let mut written = 0u64;
    loop {
        let batch = graph.next_batch(SETUP_BATCH_NODES);
        if batch.is_empty() {
            break;
        }
        let ids = engine.write_batch(&batch)?;
        if ids.first() != Some(&(written + 1)) || ids.len() != batch.len() {
            return Err(Failure::new(format!("{} did not give the ids the graph expects", engine.name())));
        }
        written += ids.len() as u64;
    }
    match graph.lots.as_slice() {
        [first, second] => Ok([*first, *second]),
        _ => Err(Failure::new("the uniform graph has not two subgraphs")),
    }
}

/// Builds the graph in `engine` and times its four calls.
fn measure(engine: &mut dyn Engine, size: UniformSize) -> Result<RecallTimes, Failure> {
    let [first, second] = build(engine, size)?;
    let expected = size.subgraph_memories as usize;
    let timed = |engine: &mut dyn Engine, id: u64, mode: Mode, dry: bool| -> Result<Duration, Failure> {
        let started = Instant::now();
        let removed =
            if dry { engine.preview_recall(id, mode)? } else { engine.recall(id, mode, Removal::Untrusted)? };
        let took = started.elapsed();
        if removed.len() != expected {
            return Err(Failure::new(format!(
                "{}: a recall of a subgraph's lot removed {} memories, not {expected}",
                engine.name(),
                removed.len()
            )));
        }
        Ok(took)
    };
    Ok(RecallTimes {
        fair_dry_run: timed(engine, first, Mode::Fair, true)?,
        fair: timed(engine, first, Mode::Fair, false)?,
        strict_dry_run: timed(engine, second, Mode::Strict, true)?,
        strict: timed(engine, second, Mode::Strict, false)?,
    })
}

/// Runs it `repeat` times on fresh data and prints the median of each time, with SQLite's and
/// the ratios when compared.
pub fn run(
    folder: &BenchFolder,
    size: UniformSize,
    io: Io,
    compare_sqlite: bool,
    repeat: u32,
    printer: Printer,
) -> Result<(), Failure> {
    let mut cheesedb_runs = Vec::new();
    let mut sqlite_runs = Vec::new();
    for run in 1..=repeat.max(1) {
        let mut side =
            CheesedbSide::create(&folder.fresh("uniform-cheesedb", run)?, io, OpenMeasurement::InThisProcess)?;
        cheesedb_runs.push(measure(&mut side, size)?);
        drop(side);
        if compare_sqlite {
            sqlite_runs.push(measure_sqlite(folder, size, run)?);
        }
    }
    print(&medians(&cheesedb_runs), (!sqlite_runs.is_empty()).then(|| medians(&sqlite_runs)), size, printer)
}

#[cfg(feature = "sqlite")]
fn measure_sqlite(folder: &BenchFolder, size: UniformSize, run: u32) -> Result<RecallTimes, Failure> {
    let mut side = crate::sqlite_side::SqliteSide::create(&folder.fresh("uniform-sqlite", run)?)?;
    measure(&mut side, size)
}

#[cfg(not(feature = "sqlite"))]
fn measure_sqlite(_folder: &BenchFolder, _size: UniformSize, _run: u32) -> Result<RecallTimes, Failure> {
    Err(Failure::new("this cheesedb-bench was built without SQLite"))
}

fn medians(runs: &[RecallTimes]) -> RecallTimes {
    let middle = |value: fn(&RecallTimes) -> Duration| {
        Duration::from_secs_f64(median(&mut runs.iter().map(|run| value(run).as_secs_f64()).collect::<Vec<f64>>()))
    };
    RecallTimes {
        fair_dry_run: middle(|run| run.fair_dry_run),
        fair: middle(|run| run.fair),
        strict_dry_run: middle(|run| run.strict_dry_run),
        strict: middle(|run| run.strict),
    }
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn print(
    cheesedb: &RecallTimes,
    sqlite: Option<RecallTimes>,
    size: UniformSize,
    printer: Printer,
) -> Result<(), Failure> {
    let theirs = sqlite.map(|sqlite| sqlite.each());
    let rows: Vec<(&str, Duration, Option<Duration>)> = cheesedb
        .each()
        .into_iter()
        .enumerate()
        .map(|(index, (call, ours))| (call, ours, theirs.and_then(|theirs| theirs.get(index).map(|(_, took)| *took))))
        .collect();
    let ratio = |ours: Duration, theirs: Duration| theirs.as_secs_f64() / ours.as_secs_f64().max(1e-9);
    let calls: Vec<serde_json::Value> = rows
        .iter()
        .map(|(call, ours, theirs)| {
            json!({
                "call": call,
                "cheesedb_ms": milliseconds(*ours),
                "sqlite_ms": theirs.map(milliseconds),
                "ratio": theirs.map(|theirs| ratio(*ours, theirs)),
            })
        })
        .collect();
    let value = json!({ "background": size.background, "subgraph_memories": size.subgraph_memories, "calls": calls });
    printer.result(value, || {
        let heading = format!(
            "a uniform graph of {} nodes, then two subgraphs of {} memories each; medians",
            size.background, size.subgraph_memories
        );
        let lines = rows.iter().map(|(call, ours, theirs)| match theirs {
            Some(theirs) => format!(
                "{call}: {:.2} ms, SQLite {:.2} ms, {:.1}x",
                milliseconds(*ours),
                milliseconds(*theirs),
                ratio(*ours, *theirs)
            ),
            None => format!("{call}: {:.2} ms", milliseconds(*ours)),
        });
        std::iter::once(heading).chain(lines).collect::<Vec<_>>().join("\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_node(size: UniformSize) -> Vec<PlannedNode> {
        let mut graph = UniformGraph::new(size);
        let mut nodes = Vec::new();
        loop {
            let batch = graph.next_batch(333);
            if batch.is_empty() {
                return nodes;
            }
            nodes.extend(batch);
        }
    }

    #[test]
    fn the_graph_has_its_shape_and_names_only_earlier_parents() {
        let nodes = every_node(SMOKE);
        assert_eq!(nodes.len() as u64, SMOKE.background + 2 * (1 + SMOKE.subgraph_memories));
        let background = &nodes[..SMOKE.background as usize];
        let lots = background.iter().filter(|node| !node.is_memory()).count();
        assert!((100..300).contains(&lots), "about one in ten: {lots}");
        for (index, node) in nodes.iter().enumerate() {
            let id = index as u64 + 1;
            if let PlannedNode::Memory { legs, .. } = node {
                assert!((1..=3).contains(&legs.len()));
                for leg in legs {
                    assert!(leg.iter().all(|parent| *parent < id), "node {id}: {leg:?}");
                    let mut sorted = leg.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(sorted.len(), leg.len(), "node {id}: a parent twice");
                }
            }
        }
        let first_lot = SMOKE.background + 1;
        for (index, node) in nodes.iter().enumerate().skip(first_lot as usize) {
            let id = index as u64 + 1;
            let lot = if id > first_lot + SMOKE.subgraph_memories {
                first_lot + 1 + SMOKE.subgraph_memories
            } else {
                first_lot
            };
            if let PlannedNode::Memory { legs, .. } = node {
                assert_eq!(legs.len(), 1);
                assert!(legs[0].iter().all(|parent| *parent >= lot), "node {id} leaves its subgraph");
            }
        }
    }

    #[test]
    fn a_smoke_run_recalls_each_subgraph_whole() {
        let folder = BenchFolder::new(None).unwrap();
        let mut side =
            CheesedbSide::create(&folder.fresh("uniform", 1).unwrap(), Io::Std, OpenMeasurement::InThisProcess)
                .unwrap();
        let times = measure(&mut side, SMOKE).unwrap();
        assert!(times.each().iter().all(|(_, took)| *took > Duration::ZERO));
    }
}
