//! The scenarios, run the same way on every engine: setup, writes, recalls, open, verify and
//! compaction. Data is generated before each clock starts, so only the engines are timed.
//!
//! The engines take turns within each scenario (writes in rounds, each round started by the
//! other engine), so that a burst of load from elsewhere on the machine lands on both rather
//! than on whichever happened to run then.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use cheesedb::Mode;

use crate::engine::{Engine, OpenFigures};
use crate::failure::Failure;
use crate::figures::{median, percentile, Figures, Metric, RecallKind};
use crate::progress::Progress;
use crate::size::Size;
use crate::workload::{PlannedNode, Workload};

/// How many turns each write scenario is cut into.
const ROUNDS: usize = 10;

/// The engines under test and their figures so far, in the same order.
struct Contestants<'e> {
    engines: Vec<&'e mut dyn Engine>,
    figures: Vec<Figures>,
    progress: Progress,
}

impl<'e> Contestants<'e> {
    /// The engines' indexes in the order of round `round`: each round starts with the next one.
    fn turns(&self, round: usize) -> impl Iterator<Item = usize> {
        let count = self.engines.len();
        (0..count).map(move |offset| (round + offset) % count)
    }

    fn record(&mut self, engine: usize, metric: Metric, value: f64) {
        self.figures[engine].insert(metric, value);
    }
}

/// Runs every scenario of `size` on `engines`, which must be empty; returns each one's figures.
pub fn run_all(
    engines: Vec<&mut dyn Engine>,
    size: &Size,
    seed: u64,
    progress: Progress,
) -> Result<Vec<Figures>, Failure> {
    run_all_keeping_workload(engines, size, seed, progress).map(|(figures, _)| figures)
}

/// As [`run_all`], and returns the data's generator too, ready for more writes whose parents
/// every engine holds alive.
pub fn run_all_keeping_workload(
    engines: Vec<&mut dyn Engine>,
    size: &Size,
    seed: u64,
    progress: Progress,
) -> Result<(Vec<Figures>, Workload), Failure> {
    let figures = vec![Figures::new(); engines.len()];
    let mut contestants = Contestants { engines, figures, progress };
    let mut workload = setup(&mut contestants, size, seed)?;
    single_writes(&mut contestants, &mut workload, size)?;
    batches(&mut contestants, &mut workload, 64, size.batches_of_64, Metric::Batch64MemoriesPerSecond)?;
    batches(&mut contestants, &mut workload, 1_024, size.batches_of_1024, Metric::Batch1024MemoriesPerSecond)?;
    threads(&mut contestants, &mut workload, size)?;
    recalls(&mut contestants, &workload)?;
    let memories = size.shape.memories + size.extra_memories();
    for index in 0..contestants.engines.len() {
        check_alive_count(&mut *contestants.engines[index], memories, &contestants.figures[index])?;
        let disk_bytes = contestants.engines[index].disk_bytes()?;
        contestants.record(index, Metric::DiskBytes, disk_bytes as f64);
    }
    opens(&mut contestants, size, memories)?;
    verifies(&mut contestants, size)?;
    compaction(&mut contestants)?;
    Ok((contestants.figures, workload))
}

/// Writes the setup data to each engine in batches, checking that every engine hands out the
/// planned ids; returns the generator, ready for the extra writes of the other scenarios.
fn setup(contestants: &mut Contestants<'_>, size: &Size, seed: u64) -> Result<Workload, Failure> {
    let mut last = None;
    for index in 0..contestants.engines.len() {
        let engine = &mut *contestants.engines[index];
        let mut workload = Workload::new(size.shape, seed);
        let phase = contestants.progress.phase(engine.name(), "setup", Some(size.shape.nodes()));
        let mut busy = Duration::ZERO;
        loop {
            let first_id = workload.setup_nodes_written() + 1;
            let batch = workload.next_setup_batch(size.setup_batch_nodes);
            if batch.is_empty() {
                break;
            }
            let started = Instant::now();
            let ids = engine.write_batch(&batch)?;
            busy += started.elapsed();
            if ids.first() != Some(&first_id) || ids.len() != batch.len() {
                return Err(Failure::new(format!(
                    "{} gave ids from {:?} where {first_id} was planned: the engines would not hold the same data",
                    engine.name(),
                    ids.first()
                )));
            }
            phase.advance(batch.len() as u64);
        }
        contestants.record(index, Metric::SetupMemoriesPerSecond, rate(size.shape.memories as usize, busy));
        last = Some(workload);
    }
    last.ok_or_else(|| Failure::new("no engine to measure"))
}

fn single_writes(contestants: &mut Contestants<'_>, workload: &mut Workload, size: &Size) -> Result<(), Failure> {
    let nodes: Vec<PlannedNode> = (0..size.single_writes).map(|_| workload.extra_memory()).collect();
    let total = (nodes.len() * contestants.engines.len()) as u64;
    let phase = contestants.progress.phase("", "one durable write at a time", Some(total));
    let count = contestants.engines.len();
    let mut latencies_microseconds = vec![Vec::with_capacity(nodes.len()); count];
    let mut busy = vec![Duration::ZERO; count];
    for (round, chunk) in nodes.chunks(nodes.len().div_ceil(ROUNDS).max(1)).enumerate() {
        for index in contestants.turns(round).collect::<Vec<_>>() {
            let engine = &mut *contestants.engines[index];
            for node in chunk {
                let started = Instant::now();
                engine.write_one(node)?;
                let elapsed = started.elapsed();
                busy[index] += elapsed;
                latencies_microseconds[index].push(elapsed.as_secs_f64() * 1e6);
                phase.advance(1);
            }
        }
    }
    for (index, latencies) in latencies_microseconds.iter_mut().enumerate() {
        contestants.record(index, Metric::SingleWritesPerSecond, rate(nodes.len(), busy[index]));
        contestants.record(index, Metric::SingleWriteMedianMicroseconds, median(latencies));
        contestants.record(index, Metric::SingleWriteP99Microseconds, percentile(latencies, 0.99));
    }
    Ok(())
}

fn batches(
    contestants: &mut Contestants<'_>,
    workload: &mut Workload,
    batch_memories: usize,
    batch_count: usize,
    metric: Metric,
) -> Result<(), Failure> {
    let batches: Vec<Vec<PlannedNode>> =
        (0..batch_count).map(|_| (0..batch_memories).map(|_| workload.extra_memory()).collect()).collect();
    let total = (batch_count * contestants.engines.len()) as u64;
    let phase = contestants.progress.phase("", &format!("batches of {batch_memories}"), Some(total));
    let mut busy = vec![Duration::ZERO; contestants.engines.len()];
    for (round, batch) in batches.iter().enumerate() {
        for index in contestants.turns(round).collect::<Vec<_>>() {
            let started = Instant::now();
            contestants.engines[index].write_batch(batch)?;
            busy[index] += started.elapsed();
            phase.advance(1);
        }
    }
    for (index, busy) in busy.into_iter().enumerate() {
        contestants.record(index, metric, rate(batch_count * batch_memories, busy));
    }
    Ok(())
}

/// Several threads write to the one agent at once, each write committed on its own.
fn threads(contestants: &mut Contestants<'_>, workload: &mut Workload, size: &Size) -> Result<(), Failure> {
    let rounds = ROUNDS.min(size.writes_per_thread).max(1);
    let per_round = size.writes_per_thread / rounds;
    let total = (rounds * per_round * size.threads * contestants.engines.len()) as u64;
    let phase = contestants.progress.phase("", &format!("{} threads writing", size.threads), Some(total));
    let mut busy = vec![Duration::ZERO; contestants.engines.len()];
    for round in 0..rounds {
        let work: Vec<Vec<PlannedNode>> =
            (0..size.threads).map(|_| (0..per_round).map(|_| workload.extra_memory()).collect()).collect();
        for index in contestants.turns(round).collect::<Vec<_>>() {
            busy[index] += threads_once(&mut *contestants.engines[index], &work, &|| phase.advance(1))?;
        }
    }
    for (index, busy) in busy.into_iter().enumerate() {
        contestants.record(index, Metric::EightThreadsWritesPerSecond, rate(rounds * per_round * size.threads, busy));
    }
    Ok(())
}

/// One thread per list of `work`, all started together; returns how long they took.
fn threads_once(
    engine: &mut dyn Engine,
    work: &[Vec<PlannedNode>],
    advance: &(dyn Fn() + Sync),
) -> Result<Duration, Failure> {
    let writers = engine.concurrent_writers(work.len())?;
    // Every thread is ready before the clock starts, so thread start-up is not timed.
    let start_line = Barrier::new(work.len() + 1);
    let (elapsed, outcomes) = std::thread::scope(|scope| {
        let handles: Vec<_> = writers
            .into_iter()
            .zip(work)
            .map(|(mut writer, nodes)| {
                let start_line = &start_line;
                scope.spawn(move || {
                    start_line.wait();
                    for node in nodes {
                        writer.write_one(node)?;
                        advance();
                    }
                    Ok::<(), Failure>(())
                })
            })
            .collect();
        start_line.wait();
        let started = Instant::now();
        let outcomes: Vec<_> = handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or_else(|_| Err(Failure::new("a writing thread stopped"))))
            .collect();
        (started.elapsed(), outcomes)
    });
    outcomes.into_iter().collect::<Result<Vec<()>, Failure>>()?;
    Ok(elapsed)
}

/// Each of the four recalls takes one family's root; the count removed is checked against the
/// data's plan, so a wrong recall cannot pass as a fast one.
fn recalls(contestants: &mut Contestants<'_>, workload: &Workload) -> Result<(), Failure> {
    for (round, (kind, family)) in RecallKind::ALL.into_iter().zip(workload.families()).enumerate() {
        let (mode, removal) = kind.mode_and_removal();
        let what = format!("recall ({})", kind.title());
        let expected = match mode {
            Mode::Fair => family.members,
            Mode::Strict => family.members + family.witnesses,
        };
        for index in contestants.turns(round).collect::<Vec<_>>() {
            let engine = &mut *contestants.engines[index];
            let _phase = contestants.progress.phase(engine.name(), &what, None);
            // The dry run first: it is the recall's computation alone, without its durable
            // write (nor, for Erase, the rewrite of the files).
            let started = Instant::now();
            let previewed = engine.preview_recall(family.root, mode)?;
            let preview_elapsed = started.elapsed();
            let started = Instant::now();
            let removed = engine.recall(family.root, mode, removal)?;
            let elapsed = started.elapsed();
            if removed.len() as u64 != expected {
                return Err(Failure::new(format!(
                    "{} removed {} memories on a {what} of {}, where the data says {expected}",
                    engine.name(),
                    removed.len(),
                    family.root
                )));
            }
            if removed != previewed {
                return Err(Failure::new(format!(
                    "{}'s {what} removed other memories than its dry run",
                    engine.name()
                )));
            }
            contestants.record(index, Metric::RecallPreviewSeconds(kind), preview_elapsed.as_secs_f64());
            contestants.record(index, Metric::RecallSeconds(kind), elapsed.as_secs_f64());
            contestants.record(index, Metric::RecallRemoved(kind), removed.len() as f64);
        }
    }
    Ok(())
}

/// Every memory written and not recalled is still alive: nothing was lost or left over.
fn check_alive_count(engine: &mut dyn Engine, memories: u64, figures: &Figures) -> Result<(), Failure> {
    let removed: f64 = RecallKind::ALL.iter().filter_map(|kind| figures.get(&Metric::RecallRemoved(*kind))).sum();
    let expected = memories - removed as u64;
    let alive = engine.alive_memories()?.len() as u64;
    if alive != expected {
        return Err(Failure::new(format!("{} has {alive} memories alive where {expected} should be", engine.name())));
    }
    Ok(())
}

fn opens(contestants: &mut Contestants<'_>, size: &Size, memories: u64) -> Result<(), Failure> {
    let total = (size.open_repeats * contestants.engines.len()) as u64;
    let phase = contestants.progress.phase("", "open", Some(total));
    let mut opens: Vec<Vec<OpenFigures>> = vec![Vec::with_capacity(size.open_repeats); contestants.engines.len()];
    for round in 0..size.open_repeats {
        for index in contestants.turns(round).collect::<Vec<_>>() {
            opens[index].push(contestants.engines[index].reopen()?);
            phase.advance(1);
        }
    }
    for (index, opens) in opens.iter().enumerate() {
        let seconds = |pick: fn(&OpenFigures) -> Duration| {
            median(&mut opens.iter().map(|open| pick(open).as_secs_f64()).collect::<Vec<_>>())
        };
        contestants.record(index, Metric::StoreOpenSeconds, seconds(|open| open.store_open));
        contestants.record(index, Metric::AgentOpenSeconds, seconds(|open| open.agent_open));
        let per_memory = |bytes: Vec<u64>| {
            let mut bytes: Vec<f64> = bytes.into_iter().map(|bytes| bytes as f64).collect();
            (!bytes.is_empty()).then(|| median(&mut bytes) / memories.max(1) as f64)
        };
        let mut replayed: Vec<f64> =
            opens.iter().filter_map(|open| open.records_replayed).map(|count| count as f64).collect();
        if !replayed.is_empty() {
            contestants.record(index, Metric::OpenRecordsReplayed, median(&mut replayed));
        }
        if let Some(bytes) = per_memory(opens.iter().filter_map(|open| open.structure_heap_bytes).collect()) {
            contestants.record(index, Metric::GraphBytesPerMemory, bytes);
        }
        if let Some(bytes) = per_memory(opens.iter().filter_map(|open| open.resident_growth_bytes).collect()) {
            contestants.record(index, Metric::ResidentBytesPerMemory, bytes);
        }
    }
    Ok(())
}

fn verifies(contestants: &mut Contestants<'_>, size: &Size) -> Result<(), Failure> {
    let total = (size.verify_repeats * contestants.engines.len()) as u64;
    let phase = contestants.progress.phase("", "verify", Some(total));
    let count = contestants.engines.len();
    let mut seconds = vec![Vec::with_capacity(size.verify_repeats); count];
    let mut bytes_per_second = vec![Vec::with_capacity(size.verify_repeats); count];
    for round in 0..size.verify_repeats {
        for index in contestants.turns(round).collect::<Vec<_>>() {
            let started = Instant::now();
            let bytes = contestants.engines[index].verify()?;
            let elapsed = started.elapsed().as_secs_f64();
            seconds[index].push(elapsed);
            bytes_per_second[index].push(bytes as f64 / elapsed.max(f64::MIN_POSITIVE));
            phase.advance(1);
        }
    }
    for index in 0..count {
        contestants.record(index, Metric::VerifySeconds, median(&mut seconds[index]));
        contestants.record(index, Metric::VerifyBytesPerSecond, median(&mut bytes_per_second[index]));
    }
    Ok(())
}

fn compaction(contestants: &mut Contestants<'_>) -> Result<(), Failure> {
    for index in contestants.turns(0).collect::<Vec<_>>() {
        let engine = &mut *contestants.engines[index];
        let _phase = contestants.progress.phase(engine.name(), "compaction", None);
        let started = Instant::now();
        engine.compact()?;
        let elapsed = started.elapsed();
        contestants.record(index, Metric::CompactSeconds, elapsed.as_secs_f64());
    }
    Ok(())
}

/// Operations per second.
pub fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
}
