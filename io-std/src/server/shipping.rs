//! Replication run by a memory server beside its clients: the loop that ships the store until
//! the server stops, and the wait of a write that is answered only once shipped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::replication::{Replicator, S3Bucket};
use crate::{Error, FileStorage, Id};

/// Replication that a server runs beside its clients.
#[derive(Debug)]
pub struct Replication {
    /// The bucket, connected with its credentials.
    pub bucket: S3Bucket,
    /// The prefix inside the bucket under which the store's agents are kept.
    pub prefix: String,
    /// The lag past which each pass says so on standard error.
    pub lag_bound: Duration,
    /// Whether a write is answered only once a pass after it has shipped it.
    pub wait_for_ship: bool,
}

/// How a server's shipping loop runs, once its bucket is the replicator's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    /// As [`Replication::lag_bound`].
    pub(crate) lag_bound: Duration,
    /// As [`Replication::wait_for_ship`].
    pub(crate) wait_for_ship: bool,
}

/// A replicator shared by the shipping loop and, when writes wait for it, the connections.
pub(crate) type SharedReplicator = Arc<Mutex<Replicator<S3Bucket, FileStorage>>>;

/// The replicator of `store` that `replication` describes, and the pace of its loop.
///
/// # Errors
/// The replicator's own, when the store's replicas cannot be read from the bucket.
pub(crate) fn start(store: &crate::Store, replication: Replication) -> Result<(SharedReplicator, Pace), Error> {
    let Replication { bucket, prefix, lag_bound, wait_for_ship } = replication;
    let replicator = Replicator::new(store, bucket, &prefix)?;
    Ok((Arc::new(Mutex::new(replicator)), Pace { lag_bound, wait_for_ship }))
}

/// Ships what `replicator` lacks, for a write that waits for it and was given `id` (if it
/// makes a lot or memory).
///
/// # Errors
/// `Error::StoredNotShipped` with the replication's own error: the write is stored here, so
/// whatever the object store did, the client must hear that it is kept, not that it failed.
pub(crate) fn ship_for_write(replicator: &SharedReplicator, id: Option<Id>) -> Result<(), Error> {
    let not_shipped = |reason: String| Error::StoredNotShipped { id, reason };
    let mut replicator =
        replicator.lock().map_err(|_| not_shipped(String::from("the replication thread stopped with a panic")))?;
    replicator.ship().map(|_| ()).map_err(|error| not_shipped(error.to_string()))
}

/// Ships until `stopping` is set, then once more. A fenced agent stops it with one line on
/// standard error; a bucket that fails is tried again.
pub(crate) fn ship_until_stopped(replicator: &SharedReplicator, pace: Pace, stopping: &AtomicBool) {
    let pause = (pace.lag_bound / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut last_warning: Option<Instant> = None;
    loop {
        let last_pass = stopping.load(Ordering::SeqCst);
        let Ok(mut replicator) = replicator.lock() else { return };
        match replicator.ship() {
            Ok(_) => {}
            Err(error @ Error::ReplicaFenced { .. }) => {
                eprintln!("cheesedb: replication stopped: {error}");
                return;
            }
            Err(error) => eprintln!("cheesedb: replication will try again: {error}"),
        }
        let over: Vec<String> = replicator
            .status()
            .iter()
            .filter(|status| status.lag > pace.lag_bound)
            .map(|status| format!("{:?} ({:.1} s)", status.name, status.lag.as_secs_f64()))
            .collect();
        drop(replicator);
        if !over.is_empty() && last_warning.is_none_or(|at| at.elapsed() > Duration::from_secs(5)) {
            eprintln!("cheesedb: replicas behind by more than the bound: {}", over.join(", "));
            last_warning = Some(Instant::now());
        }
        if last_pass {
            return;
        }
        std::thread::sleep(pause);
    }
}
