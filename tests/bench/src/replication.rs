//! `cheesedb-bench --replication s3://BUCKET/PREFIX`: replication against the object store it
//! names, beside that store's own throughput for the same bytes, in one run.
//!
//! 1. An agent of N memories is written (batches of 1,000).
//! 2. The object store alone: every file of the agent uploaded as one object, then downloaded.
//! 3. Replication from scratch (`Replicator::ship`), then a restore into a new folder.
//! 4. Durable writes, one at a time, paced at 1,000 a second, while a replicator ships in a loop
//!    (pausing [`SHIP_PAUSE`] between passes, as `cheesedb replicate` does with its default bound):
//!    each write's lag is from its acknowledgement to the end of the first ship whose head holds
//!    it; the report gives the median and the 99th percentile.
//! 5. Unpaced durable writes with replication running (the same loop) and without it, in
//!    alternating rounds of two seconds: the ratio of their rates.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cheesedb::replication::{restore_from, Bucket, ObjectStoreConfig, ReplicaLocation, Replicator, S3Bucket};
use cheesedb::{Agent, Leg, Store};
use serde_json::json;

use crate::failure::Failure;
use crate::output::Printer;

/// Memories written for the full run, `--quick` and `--smoke`.
pub fn memories_for(smoke: bool, quick: bool) -> u64 {
    match (smoke, quick) {
        (true, _) => 2_000,
        (false, true) => 100_000,
        (false, false) => 1_000_000,
    }
}

/// The pause between passes of a replicator that ships in a loop: a quarter of the default lag
/// bound, as `cheesedb replicate` and `serve --replicate-to` use.
pub const SHIP_PAUSE: Duration = Duration::from_millis(250);

fn failed(error: impl std::fmt::Display) -> Failure {
    Failure::new(format!("the replication benchmark: {error}"))
}

/// The bucket `location` names, reached with the endpoint and credentials of the standard
/// variables (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`).
fn connect(location: &ReplicaLocation) -> Result<S3Bucket, Failure> {
    Ok(S3Bucket::connect(location, &ObjectStoreConfig::from_env())?)
}

fn write_agent(agent: &Agent, memories: u64) -> Result<(), Failure> {
    let lot = agent.add_lot("bench", b"the source every memory rests on")?;
    let mut written = 0;
    while written < memories {
        let count = (memories - written).min(1_000);
        agent.batch(|batch| {
            for index in 0..count {
                let text = format!("memory {} of the replication benchmark, with some words", written + index);
                batch.remember(text.as_bytes(), &[Leg::from([lot])])?;
            }
            Ok(())
        })?;
        written += count;
    }
    Ok(())
}

/// Every file under `folder`, with its bytes.
fn files_of(folder: &Path) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(failed)? {
        let path = entry.map_err(failed)?.path();
        if path.is_dir() {
            files.extend(files_of(&path)?);
        } else {
            let name = path.file_name().map(|name| name.to_string_lossy().to_string()).unwrap_or_default();
            files.push((name, std::fs::read(&path).map_err(failed)?));
        }
    }
    Ok(files)
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// Runs the benchmark in `root` against `location`.
pub fn run(root: &Path, location: &ReplicaLocation, memories: u64, printer: Printer) -> Result<(), Failure> {
    let data = root.join("primary");
    std::fs::create_dir_all(&data).map_err(failed)?;
    let store = Store::open(&data)?;
    let agent = store.open_agent(&store.create_agent("bench")?)?;
    eprintln!("cheesedb-bench: writing {memories} memories");
    write_agent(&agent, memories)?;
    let agent_folder = data.join("agent-0000000000000001");
    let files = files_of(&agent_folder)?;
    let total_bytes: u64 = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();

    // The object store alone, for the same bytes.
    let mut bucket = connect(location)?;
    let scratch =
        format!("{}bench-raw-{}/", location.prefix.trim_end_matches('/').to_owned() + "/", std::process::id());
    let started = Instant::now();
    for (name, bytes) in &files {
        bucket.put_new(&format!("{scratch}{name}"), bytes).map_err(|error| failed(error.into_error()))?;
    }
    let raw_upload = started.elapsed();
    let started = Instant::now();
    for (name, _) in &files {
        bucket.get(&format!("{scratch}{name}")).map_err(|error| failed(error.into_error()))?;
    }
    let raw_download = started.elapsed();
    for (name, _) in &files {
        let _ = bucket.delete(&format!("{scratch}{name}"));
    }

    // Replication from scratch, and a restore.
    let prefix = format!("{}bench-{}", location.prefix.trim_end_matches('/').to_owned() + "/", std::process::id());
    let mut replicator = Replicator::new(&store, connect(location)?, &prefix)?;
    let started = Instant::now();
    let shipped = replicator.ship()?;
    let replicate = started.elapsed();
    let started = Instant::now();
    let mut restore_bucket = connect(location)?;
    restore_from(&mut restore_bucket, &prefix, &root.join("restored"), None, None)?;
    let restore = started.elapsed();

    let lags = paced_lag(&agent, replicator)?;
    let (with_replication, without_replication) = write_rates(&store, &agent, location, &prefix)?;

    let seconds = |duration: Duration| duration.as_secs_f64();
    let rate = |duration: Duration| total_bytes as f64 / seconds(duration) / 1e6;
    let report = json!({
        "memories": memories,
        "bytes": total_bytes,
        "shipped_bytes": shipped.bytes_uploaded,
        "object_store_upload_mb_per_s": rate(raw_upload),
        "object_store_download_mb_per_s": rate(raw_download),
        "replicate_mb_per_s": rate(replicate),
        "restore_mb_per_s": rate(restore),
        "replicate_ratio": seconds(raw_upload) / seconds(replicate),
        "restore_ratio": seconds(raw_download) / seconds(restore),
        "lag_median_ms": seconds(percentile(&lags, 0.5)) * 1e3,
        "lag_p99_ms": seconds(percentile(&lags, 0.99)) * 1e3,
        "lag_writes": lags.len(),
        "writes_per_s_replicating": with_replication,
        "writes_per_s_alone": without_replication,
        "write_rate_ratio": with_replication / without_replication,
    });
    printer.result(report.clone(), || {
        format!(
            "replication of {memories} memories ({:.1} MB) against the object store's own throughput:\n\
             replicate from scratch {:.1} MB/s vs upload {:.1} MB/s: {:.2}x (target at least 0.5x)\n\
             restore {:.1} MB/s vs download {:.1} MB/s: {:.2}x (target at least 0.5x)\n\
             lag at 1,000 durable writes/s: median {:.1} ms, p99 {:.1} ms over {} writes (target p99 at most 1000 ms)\n\
             durable writes/s with replication {:.0} vs without {:.0}: {:.2}x (target at least 0.9x)",
            total_bytes as f64 / 1e6,
            rate(replicate),
            rate(raw_upload),
            seconds(raw_upload) / seconds(replicate),
            rate(restore),
            rate(raw_download),
            seconds(raw_download) / seconds(restore),
            seconds(percentile(&lags, 0.5)) * 1e3,
            seconds(percentile(&lags, 0.99)) * 1e3,
            lags.len(),
            with_replication,
            without_replication,
            with_replication / without_replication
        )
    })
}

/// Writes paced at 1,000 a second for five seconds while `replicator` ships in a loop; each
/// write's lag, sorted.
fn paced_lag<B: Bucket + Send + 'static>(
    agent: &Agent,
    replicator: Replicator<B, cheesedb::FileStorage>,
) -> Result<Vec<Duration>, Failure> {
    let stopping = Arc::new(AtomicBool::new(false));
    let ships: Arc<Mutex<Vec<(Instant, u64)>>> = Arc::default();
    let shipper = {
        let (stopping, ships) = (stopping.clone(), ships.clone());
        let mut replicator = replicator;
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                if replicator.ship().is_ok() {
                    let shipped =
                        replicator.status().first().and_then(|status| status.shipped).map_or(0, |found| found.records);
                    if let Ok(mut ships) = ships.lock() {
                        ships.push((Instant::now(), shipped));
                    }
                }
                std::thread::sleep(SHIP_PAUSE);
            }
        })
    };
    let lot = agent.add_lot("paced", b"paced writes")?;
    let mut acknowledged = Vec::new();
    let started = Instant::now();
    for index in 0..5_000u32 {
        let due = started + Duration::from_millis(u64::from(index));
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let id = agent.remember(format!("paced {index}").as_bytes(), &[Leg::from([lot])])?;
        acknowledged.push((Instant::now(), id.get()));
    }
    // Let the last writes be shipped.
    std::thread::sleep(Duration::from_secs(2));
    stopping.store(true, Ordering::SeqCst);
    let _ = shipper.join();
    let ships = ships.lock().map_err(|_| failed("a shipper thread panicked"))?.clone();
    // Ids and records advance together here (one record per write), so a head of R records
    // holds every id up to R.
    let mut lags: Vec<Duration> = acknowledged
        .iter()
        .filter_map(|(at, id)| {
            ships.iter().find(|(when, records)| *records >= *id && when >= at).map(|(when, _)| *when - *at)
        })
        .collect();
    lags.sort();
    Ok(lags)
}

/// Durable writes a second with a replicator shipping in a loop, and without: alternating rounds.
fn write_rates(store: &Store, agent: &Agent, location: &ReplicaLocation, prefix: &str) -> Result<(f64, f64), Failure> {
    let lot = agent.add_lot("rate", b"rate writes")?;
    let mut with = Vec::new();
    let mut without = Vec::new();
    let mut replicator = Some(Replicator::new(store, connect(location)?, prefix)?);
    for round in 0..6 {
        let replicating = round % 2 == 0;
        let stopping = Arc::new(AtomicBool::new(false));
        let shipper = if replicating {
            let mut taken = replicator.take().ok_or_else(|| failed("no replicator"))?;
            let stopping = stopping.clone();
            Some(std::thread::spawn(move || {
                while !stopping.load(Ordering::SeqCst) {
                    let _ = taken.ship();
                    std::thread::sleep(SHIP_PAUSE);
                }
                taken
            }))
        } else {
            None
        };
        let started = Instant::now();
        let mut count = 0u64;
        while started.elapsed() < Duration::from_secs(2) {
            agent.remember(format!("rate {round} {count}").as_bytes(), &[Leg::from([lot])])?;
            count += 1;
        }
        let rate = count as f64 / started.elapsed().as_secs_f64();
        stopping.store(true, Ordering::SeqCst);
        if let Some(shipper) = shipper {
            replicator = Some(shipper.join().map_err(|_| failed("a shipper thread panicked"))?);
            with.push(rate);
        } else {
            without.push(rate);
        }
    }
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied().unwrap_or(0.0)
    };
    Ok((median(&mut with), median(&mut without)))
}
