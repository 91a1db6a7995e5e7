//! [`SimStorage`]: the engine's storage trait on a simulated disk that models the page cache,
//! crashes and faults, deterministically from a seed.
//!
//! Clones share one disk (the engine clones its storage for every agent). Every operation costs
//! virtual time, may be hit by the seed's faults, is recorded in the trace and counts towards an
//! armed crash: once the crash point is reached the disk is "powered off", and that operation
//! and every later one fail until [`SimStorage::crash`] computes what survived and powers it on.

mod checking;
mod crash;
mod disk;
mod error;
mod faults;
mod inspect;
mod operations;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::random::Random;
use crate::trace::{Event, Trace};
use disk::{Disk, Entry, NameChange};

pub use crate::paths::parent_of;
pub use disk::{Fate, PendingChange, SECTOR_BYTES};
pub use error::SimError;
pub use faults::{CrashOdds, FaultCounts, FaultKind, FaultPlan, FaultProfile};

/// How much more often a sync loses a write when it holds an overwrite in place.
const LOST_OVERWRITE_FACTOR: f64 = 32.0;

/// The kind of an operation, for its latency.
#[derive(Debug, Clone, Copy)]
enum Cost {
    Read,
    Write,
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Power {
    On,
    /// This many more operations succeed, then the power goes.
    CrashAfter(u64),
    Off,
}

/// Everything a simulated disk is, behind one shared cell.
#[derive(Debug, Clone)]
struct Simulation {
    disk: Disk,
    plan: FaultPlan,
    /// How many suspensions of faults are in force: a step that turns faults off around a
    /// call that turns them off and on again keeps them off until it ends.
    faults_suspended: u32,
    random: Random,
    faults: FaultCounts,
    clock_ticks: u64,
    operations: u64,
    power: Power,
    /// Counts crashes; handles from an earlier epoch are stale.
    epoch: u64,
    /// File syncs that succeeded.
    file_syncs: u64,
    /// An armed sync failure: this many more file syncs succeed, the next one fails.
    sync_failure: Option<u64>,
    /// Real time each file sync waits, outside the lock, so that threads writing meanwhile
    /// queue up behind it as they would behind a disk (virtual time cannot make them wait).
    sync_pause: std::time::Duration,
    trace: Trace,
}

/// The simulation, shared by a disk's clones and files. Behind a lock only so that a store on a
/// simulated disk can move between threads (`cheesedb::Store` requires it); operations still
/// happen one at a time, each under the lock, as before.
#[derive(Debug, Clone)]
struct SharedSimulation(Arc<Mutex<Simulation>>);

impl SharedSimulation {
    fn new(simulation: Simulation) -> SharedSimulation {
        SharedSimulation(Arc::new(Mutex::new(simulation)))
    }

    /// The simulation, to read.
    fn borrow(&self) -> MutexGuard<'_, Simulation> {
        // A panic under the lock is a failed test already; the state is still worth reading.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The simulation, to change.
    fn borrow_mut(&self) -> MutexGuard<'_, Simulation> {
        self.borrow()
    }
}

/// A simulated disk. Clones share it.
#[derive(Debug, Clone)]
pub struct SimStorage {
    shared: SharedSimulation,
}

/// An open file of a [`SimStorage`].
#[derive(Debug)]
pub struct SimFile {
    shared: SharedSimulation,
    inode: usize,
    epoch: u64,
}

fn event(operation: &'static str, subject: &str, number: u64, outcome: &Result<(), SimError>) -> Event {
    let outcome = match outcome {
        Ok(()) => "ok",
        Err(SimError::PowerLost) => "power-lost",
        Err(SimError::Injected(kind)) => kind.name(),
        Err(_) => "error",
    };
    Event { operation, subject: subject.to_string(), number, outcome }
}

impl Simulation {
    /// Starts an operation: counts it, charges its time, applies the armed crash and maybe a
    /// bit flip at rest.
    fn begin(&mut self, cost: Cost) -> Result<(), SimError> {
        match self.power {
            Power::Off => return Err(SimError::PowerLost),
            Power::CrashAfter(0) => {
                self.power = Power::Off;
                return Err(SimError::PowerLost);
            }
            Power::CrashAfter(left) => self.power = Power::CrashAfter(left - 1),
            Power::On => {}
        }
        self.operations += 1;
        let base = match cost {
            Cost::Read => self.plan.latency_ticks[0],
            Cost::Write => self.plan.latency_ticks[1],
            Cost::Sync => self.plan.latency_ticks[2],
        };
        self.clock_ticks += base + self.random.below(base + 1);
        let bit_flip = self.plan.bit_flip;
        if self.fault(FaultKind::BitFlip, bit_flip) {
            self.flip_random_bit();
        }
        Ok(())
    }

    /// Whether to inject a fault of `kind` now (counted when it is).
    fn fault(&mut self, kind: FaultKind, probability: f64) -> bool {
        if self.faults_suspended > 0 || probability <= 0.0 || !self.random.chance(probability) {
            return false;
        }
        self.faults.add(kind);
        true
    }

    fn flip_random_bit(&mut self) {
        let files: Vec<(String, usize)> = self
            .disk
            .durable_names
            .iter()
            .filter_map(|(path, entry)| match entry {
                Entry::File(inode) => Some((path.clone(), *inode)),
                Entry::Folder => None,
            })
            .collect();
        let Some((path, inode)) = self.random.pick(&files).cloned() else { return };
        let length = self.disk.inodes.get(inode).map_or(0, |file| file.durable.len() as u64);
        if length == 0 {
            return;
        }
        let position = self.random.below(length);
        let bit = self.random.below(8) as u8;
        self.disk.flip_bit(inode, position, bit);
        self.trace.record(Event { operation: "bit-flip", subject: path, number: position, outcome: "silent" });
    }

    fn check_epoch(&self, epoch: u64) -> Result<(), SimError> {
        if epoch == self.epoch {
            Ok(())
        } else {
            Err(SimError::StaleHandle)
        }
    }

    /// Records the end of an operation on the trace and, if it failed, with the checker.
    fn finish(
        &mut self,
        operation: &'static str,
        subject: &str,
        number: u64,
        outcome: Result<(), SimError>,
    ) -> Result<(), SimError> {
        match &outcome {
            Err(error) => self.trace.failed(operation, subject, format!("{operation} {subject}: {error}")),
            Ok(()) if operation == "read" => self.trace.read_succeeded(subject),
            Ok(()) => {}
        }
        self.trace.record(event(operation, subject, number, &outcome));
        outcome
    }

    fn change_name(&mut self, operation: &'static str, change: NameChange, subject: &str) -> Result<(), SimError> {
        let plan = self.plan.name_change_failed;
        if self.fault(FaultKind::NameChangeFailed, plan) {
            return Err(SimError::Injected(FaultKind::NameChangeFailed));
        }
        let folder = change.folder().to_string();
        let path = match &change {
            NameChange::Link { path, .. } | NameChange::Unlink { path } => path.clone(),
            NameChange::Rename { from, to, .. } => format!("{from} -> {to}"),
        };
        self.disk.change_name(change);
        self.trace.name_changed(&folder, &path);
        let _ = (operation, subject);
        Ok(())
    }
}

impl SimStorage {
    /// An empty disk whose faults and latencies follow `plan` and whose choices come from `random`.
    pub fn new(plan: FaultPlan, random: Random) -> SimStorage {
        let simulation = Simulation {
            disk: Disk::default(),
            plan,
            faults_suspended: 0,
            random,
            faults: FaultCounts::default(),
            clock_ticks: 0,
            operations: 0,
            power: Power::On,
            epoch: 0,
            file_syncs: 0,
            sync_failure: None,
            sync_pause: std::time::Duration::ZERO,
            trace: Trace::default(),
        };
        SimStorage { shared: SharedSimulation::new(simulation) }
    }

    /// An empty disk with no faults, seeded with `seed`.
    pub fn without_faults(seed: u64) -> SimStorage {
        SimStorage::new(FaultPlan::none(), Random::seeded(seed))
    }

    /// An independent copy of the whole disk (state, faults, clock, trace), for exploring
    /// several futures from one point.
    pub fn fork(&self) -> SimStorage {
        SimStorage { shared: SharedSimulation::new(self.shared.borrow().clone()) }
    }

    /// Stops injecting faults, or ends one such stop: faults come back once every stop has
    /// ended, so stops nest. Crashes still happen when armed.
    pub fn suspend_faults(&self, suspended: bool) {
        let mut simulation = self.shared.borrow_mut();
        simulation.faults_suspended = if suspended {
            simulation.faults_suspended.saturating_add(1)
        } else {
            simulation.faults_suspended.saturating_sub(1)
        };
    }

    /// Replaces the fault plan.
    pub fn set_plan(&self, plan: FaultPlan) {
        self.shared.borrow_mut().plan = plan;
    }

    /// Makes every later file sync wait `pause` of real time (see [`SimStorage`]'s threads).
    pub fn set_sync_pause(&self, pause: std::time::Duration) {
        self.shared.borrow_mut().sync_pause = pause;
    }
}

#[cfg(test)]
mod tests {
    use cheesedb_core::{Storage, StorageFile};

    use super::*;

    #[test]
    fn files_and_folders_behave_like_a_file_system() {
        let storage = SimStorage::without_faults(1);
        storage.create_folder("a").unwrap();
        let mut file = storage.open_file("a/f", true).unwrap();
        file.write_at(0, b"hello").unwrap();
        file.write_at(10, b"!").unwrap();
        assert_eq!(file.len().unwrap(), 11);
        let mut out = [0u8; 5];
        file.read_at(0, &mut out).unwrap();
        assert_eq!(&out, b"hello");
        assert_eq!(storage.list("a").unwrap(), vec!["f".to_string()]);
        assert_eq!(storage.remove_folder("a"), Err(SimError::NotEmpty));
        storage.rename("a/f", "a/g").unwrap();
        assert!(storage.exists("a/g").unwrap());
        assert!(!storage.exists("a/f").unwrap());
        assert_eq!(storage.rename("a/g", "h"), Err(SimError::CrossFolderRename));
    }

    #[test]
    fn synced_data_survives_a_crash_and_unsynced_names_may_not() {
        let storage = SimStorage::without_faults(2);
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, b"data").unwrap();
        file.sync().unwrap();
        storage.sync_folder("").unwrap();
        let mut other = storage.open_file("g", true).unwrap();
        other.write_at(0, b"more").unwrap();
        other.sync().unwrap();
        storage.crash_with(&[Fate::Drop]);
        assert_eq!(storage.file_bytes("f"), Some(b"data".to_vec()));
        assert_eq!(storage.file_bytes("g"), None);
        assert_eq!(file.len(), Err(SimError::StaleHandle));
    }

    #[test]
    fn an_armed_crash_stops_every_later_operation() {
        let storage = SimStorage::without_faults(3);
        storage.arm_crash(1);
        let mut file = storage.open_file("f", true).unwrap();
        assert_eq!(file.write_at(0, b"x"), Err(SimError::PowerLost));
        assert!(storage.is_powered_off());
        assert_eq!(storage.exists("f"), Err(SimError::PowerLost));
        storage.crash();
        assert!(!storage.is_powered_off());
        assert!(storage.exists("").unwrap());
    }

    #[test]
    fn a_fork_is_independent() {
        let storage = SimStorage::without_faults(4);
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, b"one").unwrap();
        let fork = storage.fork();
        file.write_at(0, b"two").unwrap();
        assert_eq!(fork.file_bytes("f"), Some(b"one".to_vec()));
        assert_eq!(storage.file_bytes("f"), Some(b"two".to_vec()));
    }

    #[test]
    fn the_trace_checker_sees_an_unsynced_acknowledgement() {
        let storage = SimStorage::without_faults(5);
        storage.begin_call("write without sync");
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, b"x").unwrap();
        assert!(storage.acknowledge().is_err());
        storage.begin_call("write with syncs");
        file.write_at(1, b"y").unwrap();
        file.sync().unwrap();
        storage.sync_folder("").unwrap();
        assert_eq!(storage.acknowledge(), Ok(()));
    }

    #[test]
    fn a_lost_write_shows_in_the_cache_until_a_crash_brings_back_the_older_sector() {
        let storage = SimStorage::without_faults(7);
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, &[b'o'; 1024]).unwrap();
        file.sync().unwrap();
        storage.sync_folder("").unwrap();
        let mut plan = FaultPlan::none();
        plan.lost_write = 1.0;
        storage.set_plan(plan);
        // An overwrite in place across both sectors: one of them never reaches the medium.
        file.write_at(256, &[b'n'; 512]).unwrap();
        file.sync().unwrap();
        storage.set_plan(FaultPlan::none());
        assert_eq!(storage.fault_counts().count(FaultKind::LostWrite), 1);
        let mut cached = [0u8; 512];
        file.read_at(256, &mut cached).unwrap();
        assert_eq!(cached, [b'n'; 512], "the cache shows the write");
        // A later sync of other bytes does not write the lost sector again.
        file.write_at(1024, b"tail").unwrap();
        file.sync().unwrap();
        storage.crash_with(&[]);
        let after = storage.file_bytes("f").unwrap();
        let first = &after[256..512];
        let second = &after[512..768];
        let stale = |bytes: &[u8]| bytes.iter().all(|byte| *byte == b'o');
        let new = |bytes: &[u8]| bytes.iter().all(|byte| *byte == b'n');
        assert!((stale(first) && new(second)) || (new(first) && stale(second)), "exactly one sector is stale");
        assert_eq!(&after[1024..], b"tail");
    }

    #[test]
    fn faults_follow_the_plan_and_are_counted() {
        let mut plan = FaultPlan::none();
        plan.sync_failed = 1.0;
        let storage = SimStorage::new(plan, Random::seeded(6));
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, b"x").unwrap();
        assert_eq!(file.sync(), Err(SimError::Injected(FaultKind::SyncFailed)));
        assert_eq!(storage.fault_counts().count(FaultKind::SyncFailed), 1);
        storage.suspend_faults(true);
        assert_eq!(file.sync(), Ok(()));
    }

    #[test]
    fn faults_stay_off_until_every_suspension_has_ended() {
        let mut plan = FaultPlan::none();
        plan.sync_failed = 1.0;
        let storage = SimStorage::new(plan, Random::seeded(6));
        let mut file = storage.open_file("f", true).unwrap();
        file.write_at(0, b"x").unwrap();
        storage.suspend_faults(true);
        storage.suspend_faults(true);
        storage.suspend_faults(false);
        assert_eq!(file.sync(), Ok(()));
        storage.suspend_faults(false);
        assert_eq!(file.sync(), Err(SimError::Injected(FaultKind::SyncFailed)));
    }
}
