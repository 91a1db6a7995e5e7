//! `cheesedb-bench --auto-compaction`: how long a write waits while compaction runs by itself.
//!
//! One agent of 8 MiB segments holds a lot and memories of 1 KiB on it, about 40 MiB in all,
//! plus lots a writer adds. The lot is recalled, Untrusted: every memory's text is dead, past
//! `auto_compact_dead_nodes`, and the thread starts. Timed side by side in one run: each write
//! of one writer while the thread compacts (its longest wait, the 99th percentile, the median)
//! until the report shows no dead text; the same writer's writes with no compaction running (on
//! a copy of the agent with automatic compaction off); and a whole compaction of that copy by
//! hand, which is how long a write waited when compaction held the agent for every segment.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cheesedb::{Agent, Id, Leg, Mode, Options, Removal, Store};
use serde_json::json;

use crate::failure::Failure;
use crate::folder::BenchFolder;
use crate::output::Printer;

/// How much the agent holds before the recall.
#[derive(Debug, Clone, Copy)]
pub struct CompactionSize {
    /// Memories of 1 KiB on the one lot.
    pub memories: usize,
    /// Segment size.
    pub segment_bytes: u64,
}

/// About 40 MiB of memories in 8 MiB segments.
pub const FULL: CompactionSize = CompactionSize { memories: 40_000, segment_bytes: 8 * 1024 * 1024 };
/// A size that only shows every step works.
pub const SMOKE: CompactionSize = CompactionSize { memories: 2_000, segment_bytes: 256 * 1024 };

/// The waits of one writer's writes, sorted.
#[derive(Debug, Clone, Default)]
struct Waits {
    sorted: Vec<Duration>,
}

impl Waits {
    fn new(mut waits: Vec<Duration>) -> Waits {
        waits.sort_unstable();
        Waits { sorted: waits }
    }

    fn at(&self, fraction: f64) -> Duration {
        let last = self.sorted.len().saturating_sub(1);
        let index = ((last as f64) * fraction).round() as usize;
        self.sorted.get(index.min(last)).copied().unwrap_or_default()
    }

    fn longest(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }
}

/// Builds the agent in `folder`; returns the open store, the agent and its lot.
fn build(folder: &Path, size: CompactionSize, options: Options) -> Result<(Store, Agent, Id), Failure> {
    let store = Store::builder(folder).options(options.segment_size_max_bytes(size.segment_bytes)).open()?;
    let agent = store.open_agent(&store.create_agent("compacted")?)?;
    let lot = agent.add_lot("scraper", b"the source every memory rests on")?;
    let filler = "x".repeat(1000);
    for chunk in (0..size.memories).collect::<Vec<_>>().chunks(100) {
        agent.batch(|batch| {
            for index in chunk {
                batch.remember(format!("memory {index}: {filler}").as_bytes(), &[Leg::from([lot])])?;
            }
            Ok(())
        })?;
    }
    Ok((store, agent, lot))
}

/// One write of a 100-byte lot, timed.
fn timed_write(agent: &Agent, index: usize) -> Result<Duration, Failure> {
    let started = Instant::now();
    agent.add_lot("user", format!("a note written while compaction may run, {index:>60}").as_bytes())?;
    Ok(started.elapsed())
}

/// Runs the measurement and prints it.
pub fn run(folder: &BenchFolder, size: CompactionSize, printer: Printer) -> Result<(), Failure> {
    let options = Options::default().auto_compact_dead_nodes(1000);
    let (_store, agent, lot) = build(&folder.fresh("auto-compaction", 1)?, size, options.clone())?;
    let started = Instant::now();
    agent.recall(lot, Mode::Fair, Removal::Untrusted)?;
    // The writer writes on its own thread while this one watches the report, so that no write
    // waits for the report's turn at the lock and goes untimed.
    let compacting = AtomicBool::new(true);
    let (during, compaction) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut waits = Vec::new();
            while compacting.load(Ordering::Relaxed) {
                waits.push(timed_write(&agent, waits.len())?);
            }
            Ok::<_, Failure>(waits)
        });
        while agent.report().dead_text_nodes > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let compaction = started.elapsed();
        compacting.store(false, Ordering::Relaxed);
        let waits = writer.join().map_err(|_| Failure::new("the writer panicked"))?;
        Ok::<_, Failure>((waits?, compaction))
    })?;
    let segments_compacted = agent.report().segments_compacted;
    let (_other_store, copy, lot) =
        build(&folder.fresh("compacted-by-hand", 1)?, size, options.auto_compact_dead_nodes(0))?;
    copy.recall(lot, Mode::Fair, Removal::Untrusted)?;
    let quiet: Vec<Duration> =
        (0..during.len().max(100)).map(|index| timed_write(&copy, index)).collect::<Result<_, _>>()?;
    let by_hand_started = Instant::now();
    copy.compact()?;
    let by_hand = by_hand_started.elapsed();
    print(&Waits::new(during), &Waits::new(quiet), compaction, by_hand, segments_compacted, size, printer)
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn print(
    during: &Waits,
    quiet: &Waits,
    compaction: Duration,
    by_hand: Duration,
    segments_compacted: u64,
    size: CompactionSize,
    printer: Printer,
) -> Result<(), Failure> {
    let value = json!({
        "memories": size.memories,
        "segment_bytes": size.segment_bytes,
        "segments_compacted": segments_compacted,
        "automatic_compaction_ms": milliseconds(compaction),
        "writes_during": during.sorted.len(),
        "write_wait_longest_ms": milliseconds(during.longest()),
        "write_wait_p99_ms": milliseconds(during.at(0.99)),
        "write_wait_median_ms": milliseconds(during.at(0.5)),
        "quiet_write_wait_longest_ms": milliseconds(quiet.longest()),
        "quiet_write_wait_median_ms": milliseconds(quiet.at(0.5)),
        "compaction_by_hand_ms": milliseconds(by_hand),
    });
    printer.result(value, || {
        [
            format!(
                "{} memories of 1 KiB recalled, Untrusted, in segments of {} KiB: automatic compaction rewrote {} segments in {:.0} ms",
                size.memories,
                size.segment_bytes / 1024,
                segments_compacted,
                milliseconds(compaction)
            ),
            format!(
                "one writer's {} writes meanwhile: longest wait {:.1} ms, 99th percentile {:.2} ms, median {:.2} ms",
                during.sorted.len(),
                milliseconds(during.longest()),
                milliseconds(during.at(0.99)),
                milliseconds(during.at(0.5))
            ),
            format!(
                "the same writes with no compaction running: longest {:.1} ms, median {:.2} ms",
                milliseconds(quiet.longest()),
                milliseconds(quiet.at(0.5))
            ),
            format!(
                "a whole compaction by hand (what a write waited when compaction held every segment): {:.0} ms",
                milliseconds(by_hand)
            ),
        ]
        .join("\n")
    })
}
