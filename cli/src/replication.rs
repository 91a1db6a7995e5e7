//! Replication as the command and the memory server run it: the object store's settings (the
//! standard variables, then the data folder's `object-store.toml`) and the loop that ships a
//! served store until it stops.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cheesedb::replication::{ObjectStoreConfig, ReplicaLocation, Replicator, S3Bucket};
use cheesedb::{Error, FileStorage, Store};
use serde::Deserialize;

use crate::failure::Failure;
use crate::output::escaped;

/// The data folder's file that may hold the object store's endpoint and credentials.
pub const OBJECT_STORE_FILE: &str = "object-store.toml";

/// `object-store.toml`: the same four settings as the standard variables, which win over it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectStoreFile {
    endpoint: Option<String>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    region: Option<String>,
}

/// The object store's settings: the standard variables, then the data folder's file.
fn object_store_config(folder: &Path) -> Result<ObjectStoreConfig, Failure> {
    let file: ObjectStoreFile = crate::config_file::load(folder, OBJECT_STORE_FILE)?.unwrap_or_default();
    let from_file = ObjectStoreConfig {
        endpoint: file.endpoint,
        access_key_id: file.access_key_id,
        secret_access_key: file.secret_access_key,
        region: file.region,
    };
    Ok(ObjectStoreConfig::from_env().or(from_file))
}

/// The bucket `location` names, with the settings of `folder`.
pub fn connect(location: &ReplicaLocation, folder: &Path) -> Result<S3Bucket, Failure> {
    Ok(S3Bucket::connect(location, &object_store_config(folder)?)?)
}

/// Replication that a server runs beside its clients.
#[derive(Debug, Clone)]
pub struct Replication {
    /// Where to.
    pub location: ReplicaLocation,
    /// The lag past which each pass says so on standard error.
    pub lag_bound: Duration,
    /// Whether a write is answered only once a pass after it has shipped it.
    pub wait_for_ship: bool,
}

/// A replicator shared by the shipping loop and, when writes wait for it, the connections.
pub type SharedReplicator = Arc<Mutex<Replicator<S3Bucket, FileStorage>>>;

/// The replicator of `store` that `replication` describes.
///
/// # Errors
/// A [`Failure`] when the object store's settings cannot work.
pub fn start(store: &Store, folder: &Path, replication: &Replication) -> Result<SharedReplicator, Failure> {
    let bucket = connect(&replication.location, folder)?;
    let replicator = Replicator::new(store, bucket, &replication.location.prefix)?;
    Ok(Arc::new(Mutex::new(replicator)))
}

/// Ships what `replicator` lacks, for a write that waits for it and was given `id` (if it
/// makes a lot or memory).
///
/// # Errors
/// `Error::StoredNotShipped` with the replication's own error: the write is stored here, so
/// whatever the object store did, the client must hear that it is kept, not that it failed.
pub fn ship_for_write(replicator: &SharedReplicator, id: Option<cheesedb::Id>) -> Result<(), Error> {
    let not_shipped = |reason: String| Error::StoredNotShipped { id, reason };
    let mut replicator =
        replicator.lock().map_err(|_| not_shipped(String::from("the replication thread stopped with a panic")))?;
    replicator.ship().map(|_| ()).map_err(|error| not_shipped(error.to_string()))
}

/// Ships until `stopping` is set, then once more. A fenced agent stops it with one line on
/// standard error; a bucket that fails is tried again.
pub fn ship_until_stopped(replicator: &SharedReplicator, replication: &Replication, stopping: &Arc<AtomicBool>) {
    let pause = (replication.lag_bound / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
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
            .filter(|status| status.lag > replication.lag_bound)
            .map(|status| format!("{} ({:.1} s)", escaped(&status.name), status.lag.as_secs_f64()))
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
