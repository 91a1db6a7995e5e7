//! The scenarios, run the same way on any engine: setup, writes, recalls, open, verify and
//! compaction. Data is generated before each clock starts, so only the engine is timed.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::bench::engine::{Engine, OpenFigures};
use crate::bench::figures::{median, percentile, Figures, Metric, RecallKind};
use crate::bench::progress::Progress;
use crate::bench::size::Size;
use crate::bench::workload::{PlannedNode, Workload};
use crate::failure::Failure;

/// Runs every scenario of `size` on `engine`, which must be empty.
pub fn run_all(engine: &mut dyn Engine, size: &Size, seed: u64, progress: Progress) -> Result<Figures, Failure> {
    let mut figures = Figures::new();
    let mut workload = Workload::new(size.shape, seed);
    setup(engine, &mut workload, size, progress, &mut figures)?;
    single_writes(engine, &mut workload, size, progress, &mut figures)?;
    batches(engine, &mut workload, 64, size.batches_of_64, Metric::Batch64MemoriesPerSecond, progress, &mut figures)?;
    let metric = Metric::Batch1024MemoriesPerSecond;
    batches(engine, &mut workload, 1_024, size.batches_of_1024, metric, progress, &mut figures)?;
    threads(engine, &mut workload, size, progress, &mut figures)?;
    recalls(engine, &workload, progress, &mut figures)?;
    let memories = size.shape.memories + size.extra_memories();
    check_alive_count(engine, memories, &figures)?;
    figures.insert(Metric::DiskBytes, engine.disk_bytes()? as f64);
    opens(engine, size, memories, progress, &mut figures)?;
    verifies(engine, size, progress, &mut figures)?;
    compaction(engine, progress, &mut figures)?;
    Ok(figures)
}

/// Writes the setup data in batches, checking that the engine hands out the planned ids.
fn setup(
    engine: &mut dyn Engine,
    workload: &mut Workload,
    size: &Size,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let shape = workload.shape();
    let phase = progress.phase(engine.name(), "setup", Some(shape.nodes()));
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
        let expected: Vec<u64> = (first_id..first_id + batch.len() as u64).collect();
        if ids != expected {
            return Err(Failure::new(format!(
                "{} gave ids {:?}.. where {first_id}.. was planned: the engines would not hold the same data",
                engine.name(),
                ids.first()
            )));
        }
        phase.advance(batch.len() as u64);
    }
    figures.insert(Metric::SetupMemoriesPerSecond, rate(shape.memories as usize, busy));
    Ok(())
}

fn single_writes(
    engine: &mut dyn Engine,
    workload: &mut Workload,
    size: &Size,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let nodes: Vec<PlannedNode> = (0..size.single_writes).map(|_| workload.extra_memory()).collect();
    let phase = progress.phase(engine.name(), "one durable write at a time", Some(nodes.len() as u64));
    let mut latencies_microseconds = Vec::with_capacity(nodes.len());
    let started = Instant::now();
    for node in &nodes {
        let write_started = Instant::now();
        engine.write_one(node)?;
        latencies_microseconds.push(write_started.elapsed().as_secs_f64() * 1e6);
        phase.advance(1);
    }
    let elapsed = started.elapsed();
    figures.insert(Metric::SingleWritesPerSecond, rate(nodes.len(), elapsed));
    figures.insert(Metric::SingleWriteMedianMicroseconds, median(&mut latencies_microseconds));
    figures.insert(Metric::SingleWriteP99Microseconds, percentile(&mut latencies_microseconds, 0.99));
    Ok(())
}

fn batches(
    engine: &mut dyn Engine,
    workload: &mut Workload,
    batch_memories: usize,
    batch_count: usize,
    metric: Metric,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let batches: Vec<Vec<PlannedNode>> =
        (0..batch_count).map(|_| (0..batch_memories).map(|_| workload.extra_memory()).collect()).collect();
    let what = format!("batches of {batch_memories}");
    let phase = progress.phase(engine.name(), &what, Some(batch_count as u64));
    let started = Instant::now();
    for batch in &batches {
        engine.write_batch(batch)?;
        phase.advance(1);
    }
    figures.insert(metric, rate(batch_count * batch_memories, started.elapsed()));
    Ok(())
}

/// Several threads write to the one agent at once, each write committed on its own.
fn threads(
    engine: &mut dyn Engine,
    workload: &mut Workload,
    size: &Size,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let work: Vec<Vec<PlannedNode>> =
        (0..size.threads).map(|_| (0..size.writes_per_thread).map(|_| workload.extra_memory()).collect()).collect();
    let mut writers = Vec::with_capacity(size.threads);
    for _ in 0..size.threads {
        writers.push(engine.concurrent_writer()?);
    }
    let what = format!("{} threads writing", size.threads);
    let phase = progress.phase(engine.name(), &what, Some((size.threads * size.writes_per_thread) as u64));
    // Every thread is ready before the clock starts, so thread start-up is not timed.
    let start_line = Barrier::new(size.threads + 1);
    let (elapsed, outcomes) = std::thread::scope(|scope| {
        let handles: Vec<_> = writers
            .into_iter()
            .zip(&work)
            .map(|(mut writer, nodes)| {
                let start_line = &start_line;
                let phase = &phase;
                scope.spawn(move || {
                    start_line.wait();
                    for node in nodes {
                        writer.write_one(node)?;
                        phase.advance(1);
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
    figures.insert(Metric::EightThreadsWritesPerSecond, rate(size.threads * size.writes_per_thread, elapsed));
    Ok(())
}

/// Each of the four recalls takes one family's root; the count removed is checked against the
/// data's plan, so a wrong recall cannot pass as a fast one.
fn recalls(
    engine: &mut dyn Engine,
    workload: &Workload,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let families = workload.families();
    for (kind, family) in RecallKind::ALL.into_iter().zip(families) {
        let (mode, removal) = kind.mode_and_removal();
        let what = format!("recall ({mode:?}, {removal:?})");
        let _phase = progress.phase(engine.name(), &what, None);
        let started = Instant::now();
        let removed = engine.recall(family.root, mode, removal)?;
        let elapsed = started.elapsed();
        let expected = match mode {
            cheesedb::Mode::Fair => family.members,
            cheesedb::Mode::Strict => family.members + family.witnesses,
        };
        if removed.len() as u64 != expected {
            return Err(Failure::new(format!(
                "{} removed {} memories on a {what} of {}, where the data says {expected}",
                engine.name(),
                removed.len(),
                family.root
            )));
        }
        figures.insert(Metric::RecallSeconds(kind), elapsed.as_secs_f64());
        figures.insert(Metric::RecallRemoved(kind), removed.len() as f64);
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

fn opens(
    engine: &mut dyn Engine,
    size: &Size,
    memories: u64,
    progress: Progress,
    figures: &mut Figures,
) -> Result<(), Failure> {
    let phase = progress.phase(engine.name(), "open", Some(size.open_repeats as u64));
    let mut opens: Vec<OpenFigures> = Vec::with_capacity(size.open_repeats);
    for _ in 0..size.open_repeats {
        opens.push(engine.reopen()?);
        phase.advance(1);
    }
    let seconds = |pick: fn(&OpenFigures) -> Duration| {
        median(&mut opens.iter().map(|open| pick(open).as_secs_f64()).collect::<Vec<_>>())
    };
    figures.insert(Metric::StoreOpenSeconds, seconds(|open| open.store_open));
    figures.insert(Metric::AgentOpenSeconds, seconds(|open| open.agent_open));
    let per_memory = |bytes: Vec<u64>| {
        let mut bytes: Vec<f64> = bytes.into_iter().map(|bytes| bytes as f64).collect();
        (!bytes.is_empty()).then(|| median(&mut bytes) / memories.max(1) as f64)
    };
    if let Some(bytes) = per_memory(opens.iter().filter_map(|open| open.structure_heap_bytes).collect()) {
        figures.insert(Metric::GraphBytesPerMemory, bytes);
    }
    if let Some(bytes) = per_memory(opens.iter().filter_map(|open| open.resident_growth_bytes).collect()) {
        figures.insert(Metric::ResidentBytesPerMemory, bytes);
    }
    Ok(())
}

fn verifies(engine: &mut dyn Engine, size: &Size, progress: Progress, figures: &mut Figures) -> Result<(), Failure> {
    let phase = progress.phase(engine.name(), "verify", Some(size.verify_repeats as u64));
    let mut seconds = Vec::with_capacity(size.verify_repeats);
    let mut bytes_per_second = Vec::with_capacity(size.verify_repeats);
    for _ in 0..size.verify_repeats {
        let started = Instant::now();
        let bytes = engine.verify()?;
        let elapsed = started.elapsed().as_secs_f64();
        seconds.push(elapsed);
        bytes_per_second.push(bytes as f64 / elapsed.max(f64::MIN_POSITIVE));
        phase.advance(1);
    }
    figures.insert(Metric::VerifySeconds, median(&mut seconds));
    figures.insert(Metric::VerifyBytesPerSecond, median(&mut bytes_per_second));
    Ok(())
}

fn compaction(engine: &mut dyn Engine, progress: Progress, figures: &mut Figures) -> Result<(), Failure> {
    let _phase = progress.phase(engine.name(), "compaction", None);
    let started = Instant::now();
    engine.compact()?;
    figures.insert(Metric::CompactSeconds, started.elapsed().as_secs_f64());
    Ok(())
}

/// Operations per second.
fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
}
