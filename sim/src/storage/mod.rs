//! [`SimStorage`]: the engine's storage trait on a simulated disk that models the page cache,
//! crashes and faults, deterministically from a seed.
//!
//! Clones share one disk (the engine clones its storage for every agent). Every operation costs
//! virtual time, may be hit by the seed's faults, is recorded in the trace and counts towards an
//! armed crash: once the crash point is reached the disk is "powered off", and that operation
//! and every later one fail until [`SimStorage::crash`] computes what survived and powers it on.

mod disk;
mod faults;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cheesedb_core::{Storage, StorageError, StorageErrorKind, StorageFile};

use crate::random::Random;
use crate::trace::{Event, Trace};
use disk::{Disk, Entry, FileChange, NameChange};

pub use disk::{Fate, PendingChange, SECTOR_BYTES};
pub use faults::{CrashOdds, FaultCounts, FaultKind, FaultPlan, FaultProfile};

/// The folder holding `path` (`""` for the root).
pub fn parent_of(path: &str) -> &str {
    disk::parent(path)
}

/// How much more often a sync loses a write when it holds an overwrite in place.
const LOST_OVERWRITE_FACTOR: f64 = 32.0;

/// Why an operation of the simulated disk failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimError {
    /// The crash point was reached: the machine is off until the crash is applied.
    PowerLost,
    /// A handle opened before the last crash was used.
    StaleHandle,
    /// No file or folder has that path, or its folder does not exist.
    NotFound,
    /// The folder to remove is not empty.
    NotEmpty,
    /// The path is a folder where a file was expected, or the other way round.
    WrongKind,
    /// A rename across folders (the trait promises it never happens).
    CrossFolderRename,
    /// A read past the end of a file.
    ReadPastEnd,
    /// An injected fault.
    Injected(FaultKind),
}

impl fmt::Display for SimError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::PowerLost => formatter.write_str("power lost (simulated crash)"),
            SimError::StaleHandle => formatter.write_str("file handle from before a crash"),
            SimError::NotFound => formatter.write_str("no such file or folder"),
            SimError::NotEmpty => formatter.write_str("folder not empty"),
            SimError::WrongKind => formatter.write_str("file where a folder was expected, or the reverse"),
            SimError::CrossFolderRename => formatter.write_str("rename across folders"),
            SimError::ReadPastEnd => formatter.write_str("read past the end of the file"),
            SimError::Injected(kind) => write!(formatter, "injected fault: {}", kind.name()),
        }
    }
}

impl std::error::Error for SimError {}

impl StorageError for SimError {
    fn kind(&self) -> StorageErrorKind {
        match self {
            SimError::NotFound => StorageErrorKind::NotFound,
            SimError::Injected(FaultKind::NoSpace) => StorageErrorKind::NoSpace,
            SimError::PowerLost
            | SimError::StaleHandle
            | SimError::NotEmpty
            | SimError::WrongKind
            | SimError::CrossFolderRename
            | SimError::ReadPastEnd
            | SimError::Injected(_) => StorageErrorKind::Other,
        }
    }
}

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
    faults_suspended: bool,
    random: Random,
    faults: FaultCounts,
    clock_ticks: u64,
    operations: u64,
    power: Power,
    /// Counts crashes; handles from an earlier epoch are stale.
    epoch: u64,
    /// File syncs that succeeded.
    file_syncs: u64,
    /// Real time each file sync waits, outside the lock, so that threads writing meanwhile
    /// queue up behind it as they would behind a disk (virtual time cannot make them wait).
    sync_pause: std::time::Duration,
    trace: Trace,
}

/// The simulation, shared by a disk's clones and files. Behind a lock only so that a store on a
/// simulated disk can move between threads (`cheesedb::Store` requires it); operations still
/// happen one at a time, each under the lock, as before.
#[derive(Debug, Clone)]
struct Shared(Arc<Mutex<Simulation>>);

impl Shared {
    fn new(simulation: Simulation) -> Shared {
        Shared(Arc::new(Mutex::new(simulation)))
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
    shared: Shared,
}

/// An open file of a [`SimStorage`].
#[derive(Debug)]
pub struct SimFile {
    shared: Shared,
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
        if self.faults_suspended || probability <= 0.0 || !self.random.chance(probability) {
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

    fn random_fate(&mut self) -> disk::Fate {
        let odds = self.plan.crash;
        let roll = self.random.below(1_000_000) as f64 / 1_000_000.0;
        if roll < odds.keep {
            disk::Fate::Keep
        } else if roll < odds.keep + odds.prefix {
            disk::Fate::Prefix(self.random.below(1 << 20))
        } else if roll < odds.keep + odds.prefix + odds.garble {
            disk::Fate::Garble(self.random.next_u64())
        } else {
            disk::Fate::Drop
        }
    }

    /// A prefix fate cut at a random point within the write, sector-aligned half of the time.
    fn torn_length(&mut self, offset: u64, length: u64) -> u64 {
        let kept = self.random.below(length.max(1));
        if self.random.chance(0.5) {
            let end = offset + kept;
            (end - end % SECTOR_BYTES).saturating_sub(offset).min(kept)
        } else {
            kept
        }
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
            faults_suspended: false,
            random,
            faults: FaultCounts::default(),
            clock_ticks: 0,
            operations: 0,
            power: Power::On,
            epoch: 0,
            file_syncs: 0,
            sync_pause: std::time::Duration::ZERO,
            trace: Trace::echoing(std::env::var_os("CHEESEDB_SIM_ECHO").is_some()),
        };
        SimStorage { shared: Shared::new(simulation) }
    }

    /// An empty disk with no faults, seeded with `seed`.
    pub fn without_faults(seed: u64) -> SimStorage {
        SimStorage::new(FaultPlan::none(), Random::seeded(seed))
    }

    /// An independent copy of the whole disk (state, faults, clock, trace), for exploring
    /// several futures from one point.
    pub fn fork(&self) -> SimStorage {
        SimStorage { shared: Shared::new(self.shared.borrow().clone()) }
    }

    /// Stops (or restarts) injecting faults; crashes still happen when armed.
    pub fn suspend_faults(&self, suspended: bool) {
        self.shared.borrow_mut().faults_suspended = suspended;
    }

    /// Replaces the fault plan.
    pub fn set_plan(&self, plan: FaultPlan) {
        self.shared.borrow_mut().plan = plan;
    }

    /// Arms a crash: `operations` more storage operations succeed, the next one loses power.
    pub fn arm_crash(&self, operations: u64) {
        self.shared.borrow_mut().power = Power::CrashAfter(operations);
    }

    /// Disarms a crash that has not happened yet.
    pub fn disarm_crash(&self) {
        let mut simulation = self.shared.borrow_mut();
        if let Power::CrashAfter(_) = simulation.power {
            simulation.power = Power::On;
        }
    }

    /// Whether the armed crash point was reached.
    pub fn is_powered_off(&self) -> bool {
        self.shared.borrow().power == Power::Off
    }

    /// Cuts the power now (if it is not off already).
    pub fn power_off(&self) {
        self.shared.borrow_mut().power = Power::Off;
    }

    /// The crash: every unsynced change meets a random fate, the durable state is all that is
    /// left, open handles become stale, and the power comes back.
    pub fn crash(&self) {
        let mut simulation = self.shared.borrow_mut();
        let count = simulation.disk.pending_changes().len();
        let mut fates = Vec::with_capacity(count);
        let changes = simulation.disk.pending_changes();
        for change in &changes {
            let fate = match change {
                PendingChange::Write { offset, length, .. } => match simulation.random_fate() {
                    disk::Fate::Prefix(_) => disk::Fate::Prefix(simulation.torn_length(*offset, *length)),
                    other => other,
                },
                PendingChange::SetLength { .. } => {
                    if simulation.random.chance(0.5) {
                        disk::Fate::Keep
                    } else {
                        disk::Fate::Drop
                    }
                }
                PendingChange::Name { .. } => {
                    let keep = simulation.plan.crash.keep_name_change;
                    if simulation.random.chance(keep) {
                        disk::Fate::Keep
                    } else {
                        disk::Fate::Drop
                    }
                }
            };
            fates.push(fate);
        }
        simulation.disk.crash_with(&fates);
        simulation.after_crash(changes.len());
    }

    /// The crash with chosen fates, one per [`SimStorage::pending_changes`] entry in that order.
    pub fn crash_with(&self, fates: &[Fate]) {
        let mut simulation = self.shared.borrow_mut();
        let count = simulation.disk.pending_changes().len();
        simulation.disk.crash_with(fates);
        simulation.after_crash(count);
    }

    /// Every change not yet durable.
    pub fn pending_changes(&self) -> Vec<PendingChange> {
        self.shared.borrow().disk.pending_changes()
    }

    /// File syncs that succeeded so far.
    pub fn file_syncs(&self) -> u64 {
        self.shared.borrow().file_syncs
    }

    /// Makes every later file sync wait `pause` of real time (see [`SimStorage`]'s threads).
    pub fn set_sync_pause(&self, pause: std::time::Duration) {
        self.shared.borrow_mut().sync_pause = pause;
    }

    /// Storage operations so far.
    pub fn operation_count(&self) -> u64 {
        self.shared.borrow().operations
    }

    /// Virtual time so far.
    pub fn clock_ticks(&self) -> u64 {
        self.shared.borrow().clock_ticks
    }

    /// The faults injected so far.
    pub fn fault_counts(&self) -> FaultCounts {
        self.shared.borrow().faults.clone()
    }

    /// The hash of the whole trace so far.
    pub fn trace_hash(&self) -> u64 {
        self.shared.borrow().trace.hash()
    }

    /// The last events of the trace, one a line.
    pub fn recent_events(&self) -> String {
        self.shared.borrow().trace.recent()
    }

    /// Tells the trace checker that a call into the engine starts.
    pub fn begin_call(&self, call: &str) {
        self.shared.borrow_mut().trace.begin_call(call);
    }

    /// Tells the trace checker that the engine acknowledged the call; returns what it found wrong.
    pub fn acknowledge(&self) -> Result<(), String> {
        self.shared.borrow_mut().trace.acknowledge()
    }

    /// Tells the trace checker that the engine refused or failed the call.
    pub fn refuse(&self, why: &str) {
        self.shared.borrow_mut().trace.refuse(why);
    }

    /// Records a harness step in the trace (it counts in the trace hash).
    pub fn note(&self, operation: &'static str, subject: &str, number: u64) {
        self.shared.borrow_mut().trace.record(Event { operation, subject: subject.to_string(), number, outcome: "ok" });
    }

    /// The bytes of the file at `path` as a program sees them.
    pub fn file_bytes(&self, path: &str) -> Option<Vec<u8>> {
        let simulation = self.shared.borrow();
        match simulation.disk.lookup(path)? {
            Entry::File(inode) => Some(simulation.disk.volatile(inode).to_vec()),
            Entry::Folder => None,
        }
    }

    /// Replaces the bytes of the file at `path`, durably, as if the medium held them: for
    /// corruption tests. Returns whether the file exists.
    pub fn replace_file_bytes(&self, path: &str, bytes: &[u8]) -> bool {
        let mut simulation = self.shared.borrow_mut();
        let Some(Entry::File(inode)) = simulation.disk.lookup(path) else { return false };
        let Some(file) = simulation.disk.inodes.get_mut(inode) else { return false };
        file.durable = bytes.to_vec();
        file.volatile = bytes.to_vec();
        file.pending.clear();
        true
    }

    /// Whether segment `segment` of agent `number` exists now.
    pub fn exists_segment(&self, number: u64, segment: u64) -> bool {
        let folder = cheesedb_core::log::names::agent_folder(number);
        let path = cheesedb_core::log::names::segment_path(&folder, segment);
        self.shared.borrow().disk.lookup(&path).is_some()
    }

    /// The paths of every file, now.
    pub fn file_paths(&self) -> Vec<String> {
        let simulation = self.shared.borrow();
        simulation
            .disk
            .volatile_names
            .iter()
            .filter(|(_, entry)| matches!(entry, Entry::File(_)))
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// Calls `visit` with every image of every file reachable by a name, durable or volatile:
    /// what a byte search of the disk, before or after a crash, could find.
    pub fn visit_images(&self, mut visit: impl FnMut(&str, &[u8])) {
        let simulation = self.shared.borrow();
        for (path, inode) in simulation.disk.reachable_files() {
            if let Some(file) = simulation.disk.inodes.get(inode) {
                visit(&path, &file.durable);
                visit(&path, &file.volatile);
                for change in &file.pending {
                    if let FileChange::Write { bytes, .. } = change {
                        visit(&path, bytes);
                    }
                }
            }
        }
    }
}

impl SimStorage {
    /// Calls `visit` with the cached image and every unsynced write of every file reachable by a
    /// name: what a running program can read, leaving out what only the medium holds.
    pub fn visit_cached_images(&self, mut visit: impl FnMut(&str, &[u8])) {
        let simulation = self.shared.borrow();
        for (path, inode) in simulation.disk.reachable_files() {
            if let Some(file) = simulation.disk.inodes.get(inode) {
                visit(&path, &file.volatile);
                for change in &file.pending {
                    if let FileChange::Write { bytes, .. } = change {
                        visit(&path, bytes);
                    }
                }
            }
        }
    }
}

impl Simulation {
    fn after_crash(&mut self, changes: usize) {
        self.epoch += 1;
        self.power = Power::On;
        self.trace.record(Event { operation: "crash", subject: String::new(), number: changes as u64, outcome: "ok" });
    }

    fn open_file(&mut self, path: &str, create: bool) -> Result<usize, SimError> {
        let folder = disk::parent(path);
        if !self.disk.folder_exists(folder) {
            return Err(SimError::NotFound);
        }
        match self.disk.lookup(path) {
            Some(Entry::File(inode)) => Ok(inode),
            Some(Entry::Folder) => Err(SimError::WrongKind),
            None if !create => Err(SimError::NotFound),
            None => {
                let inode = self.disk.new_inode();
                let change = NameChange::Link { path: path.to_string(), entry: Entry::File(inode) };
                self.change_name("create", change, path)?;
                Ok(inode)
            }
        }
    }

    fn write_at(&mut self, inode: usize, offset: u64, bytes: &[u8]) -> Result<(), SimError> {
        let length = bytes.len() as u64;
        let grows = offset + length > self.disk.volatile(inode).len() as u64;
        let plan = self.plan.clone();
        if grows && self.fault(FaultKind::NoSpace, plan.no_space) {
            return Err(SimError::Injected(FaultKind::NoSpace));
        }
        if self.fault(FaultKind::WriteFailed, plan.write_failed) {
            return Err(SimError::Injected(FaultKind::WriteFailed));
        }
        let path = self.disk.inode_name(inode);
        self.trace.file_changed(inode, &path);
        if length > 0 && self.fault(FaultKind::ShortWrite, plan.short_write) {
            let kept = self.random.below(length) as usize;
            self.disk.write(inode, offset, bytes.get(..kept).unwrap_or_default());
            return Err(SimError::Injected(FaultKind::ShortWrite));
        }
        if length > 0 && self.fault(FaultKind::MisdirectedWrite, plan.misdirected_write) {
            let (target, target_offset) = self.misdirection(inode, offset);
            self.disk.write(target, target_offset, bytes);
            let name = self.disk.inode_name(target);
            self.trace.record(Event {
                operation: "misdirected-write",
                subject: name,
                number: target_offset,
                outcome: "silent",
            });
            return Ok(());
        }
        self.disk.write(inode, offset, bytes);
        Ok(())
    }

    /// Where a misdirected write lands: a few sectors away in the same file, or at the same
    /// offset of another file.
    fn misdirection(&mut self, inode: usize, offset: u64) -> (usize, u64) {
        let others: Vec<usize> =
            self.disk.reachable_files().into_iter().map(|(_, other)| other).filter(|other| *other != inode).collect();
        if !others.is_empty() && self.random.chance(0.3) {
            if let Some(other) = self.random.pick(&others) {
                return (*other, offset);
            }
        }
        let distance = self.random.between(1, 8) * SECTOR_BYTES;
        if offset >= distance && self.random.chance(0.5) {
            (inode, offset - distance)
        } else {
            (inode, offset + distance)
        }
    }

    fn sync(&mut self, inode: usize) -> Result<(), SimError> {
        let plan = self.plan.sync_failed;
        if self.fault(FaultKind::SyncFailed, plan) {
            let mut fates = Vec::new();
            let pending = self.disk.inodes.get(inode).map_or(0, |file| file.pending.len());
            for _ in 0..pending {
                fates.push(self.random_fate());
            }
            let mut fates = fates.into_iter();
            self.disk.sync_file_partly(inode, || fates.next().unwrap_or(disk::Fate::Drop));
            return Err(SimError::Injected(FaultKind::SyncFailed));
        }
        // Overwrites in place are where a stale sector brings back older content (an erased
        // text, a superseded commit marker): they are hit far more often than appends.
        let in_place = self.disk.overwrites_in_place(inode);
        let lost_write =
            if in_place { (self.plan.lost_write * LOST_OVERWRITE_FACTOR).min(0.5) } else { self.plan.lost_write };
        let has_writes = self.disk.inodes.get(inode).is_some_and(|file| !file.pending.is_empty());
        let lost = if has_writes && self.fault(FaultKind::LostWrite, lost_write) {
            let random = &mut self.random;
            self.disk.sector_to_lose(inode, |count| random.below(count.max(1)))
        } else {
            None
        };
        self.disk.sync_file(inode);
        self.file_syncs += 1;
        if let Some((offset, old)) = lost {
            self.disk.lose_write(inode, offset, &old);
            let name = self.disk.inode_name(inode);
            self.trace.record(Event { operation: "lost-write", subject: name, number: offset, outcome: "silent" });
        }
        self.trace.file_synced(inode);
        Ok(())
    }

    fn set_length(&mut self, inode: usize, length: u64) -> Result<(), SimError> {
        let grows = length > self.disk.volatile(inode).len() as u64;
        let plan = self.plan.no_space;
        if grows && self.fault(FaultKind::NoSpace, plan) {
            return Err(SimError::Injected(FaultKind::NoSpace));
        }
        self.disk.set_length(inode, length);
        let path = self.disk.inode_name(inode);
        self.trace.file_changed(inode, &path);
        Ok(())
    }

    fn read_at(&mut self, inode: usize, offset: u64, out: &mut [u8]) -> Result<(), SimError> {
        let plan = self.plan.read_error;
        if self.fault(FaultKind::ReadError, plan) {
            return Err(SimError::Injected(FaultKind::ReadError));
        }
        let bytes = self.disk.volatile(inode);
        let start = usize::try_from(offset).map_err(|_| SimError::ReadPastEnd)?;
        let end = start.checked_add(out.len()).ok_or(SimError::ReadPastEnd)?;
        let source = bytes.get(start..end).ok_or(SimError::ReadPastEnd)?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn create_folder(&mut self, path: &str) -> Result<(), SimError> {
        if !self.disk.folder_exists(disk::parent(path)) {
            return Err(SimError::NotFound);
        }
        match self.disk.lookup(path) {
            Some(Entry::Folder) => Ok(()),
            Some(Entry::File(_)) => Err(SimError::WrongKind),
            None => self.change_name(
                "create-folder",
                NameChange::Link { path: path.to_string(), entry: Entry::Folder },
                path,
            ),
        }
    }

    fn remove_folder(&mut self, path: &str) -> Result<(), SimError> {
        if path.is_empty() || self.disk.lookup(path) != Some(Entry::Folder) {
            return Err(SimError::NotFound);
        }
        if !self.disk.children(path).is_empty() {
            return Err(SimError::NotEmpty);
        }
        self.change_name("remove-folder", NameChange::Unlink { path: path.to_string() }, path)?;
        self.trace.folder_removed(path);
        Ok(())
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), SimError> {
        if disk::parent(from) != disk::parent(to) {
            return Err(SimError::CrossFolderRename);
        }
        let Some(Entry::File(inode)) = self.disk.lookup(from) else { return Err(SimError::NotFound) };
        if self.disk.lookup(to) == Some(Entry::Folder) {
            return Err(SimError::WrongKind);
        }
        self.change_name("rename", NameChange::Rename { from: from.to_string(), to: to.to_string(), inode }, from)
    }

    fn remove_file(&mut self, path: &str) -> Result<(), SimError> {
        match self.disk.lookup(path) {
            Some(Entry::File(_)) => self.change_name("remove", NameChange::Unlink { path: path.to_string() }, path),
            Some(Entry::Folder) => Err(SimError::WrongKind),
            None => Err(SimError::NotFound),
        }
    }

    fn sync_folder(&mut self, folder: &str) -> Result<(), SimError> {
        if !self.disk.folder_exists(folder) {
            return Err(SimError::NotFound);
        }
        let plan = self.plan.folder_sync_failed;
        if self.fault(FaultKind::FolderSyncFailed, plan) {
            let keep = self.plan.crash.keep_name_change;
            let mut choices = Vec::new();
            for _ in 0..self.disk.pending_names.len() {
                choices.push(self.random.chance(keep));
            }
            let mut choices = choices.into_iter();
            self.disk.sync_folder_partly(folder, || choices.next().unwrap_or(false));
            return Err(SimError::Injected(FaultKind::FolderSyncFailed));
        }
        self.disk.sync_folder(folder);
        self.trace.folder_synced(folder);
        Ok(())
    }
}

impl Storage for SimStorage {
    type File = SimFile;
    type Error = SimError;

    fn open_file(&self, path: &str, create: bool) -> Result<SimFile, SimError> {
        let mut simulation = self.shared.borrow_mut();
        let cost = if create { Cost::Write } else { Cost::Read };
        let opened = simulation.begin(cost).and_then(|()| simulation.open_file(path, create));
        let epoch = simulation.epoch;
        let outcome = opened.map(|_| ());
        simulation.finish("open", path, u64::from(create), outcome)?;
        let inode = opened?;
        Ok(SimFile { shared: self.shared.clone(), inode, epoch })
    }

    fn exists(&self, path: &str) -> Result<bool, SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Read);
        simulation.finish("exists", path, 0, outcome)?;
        Ok(simulation.disk.lookup(path).is_some())
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Read).and_then(|()| {
            if simulation.disk.folder_exists(folder) {
                Ok(())
            } else {
                Err(SimError::NotFound)
            }
        });
        simulation.finish("list", folder, 0, outcome)?;
        Ok(simulation.disk.children(folder))
    }

    fn create_folder(&self, path: &str) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Write).and_then(|()| simulation.create_folder(path));
        simulation.finish("create-folder", path, 0, outcome)
    }

    fn remove_folder(&self, path: &str) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Write).and_then(|()| simulation.remove_folder(path));
        simulation.finish("remove-folder", path, 0, outcome)
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Write).and_then(|()| simulation.rename(from, to));
        simulation.finish("rename", &format!("{from} -> {to}"), 0, outcome)
    }

    fn remove_file(&self, path: &str) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Write).and_then(|()| simulation.remove_file(path));
        simulation.finish("remove", path, 0, outcome)
    }

    fn sync_folder(&self, folder: &str) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        let outcome = simulation.begin(Cost::Sync).and_then(|()| simulation.sync_folder(folder));
        simulation.finish("sync-folder", folder, 0, outcome)
    }

    fn fill_random(&self, out: &mut [u8]) -> Result<(), SimError> {
        let mut simulation = self.shared.borrow_mut();
        if simulation.power == Power::Off {
            return Err(SimError::PowerLost);
        }
        simulation.random.fill(out);
        Ok(())
    }
}

impl SimFile {
    /// Runs one operation on this file: power, epoch, the operation, the trace.
    fn operate<T>(
        &self,
        operation: &'static str,
        cost: Cost,
        number: u64,
        body: impl FnOnce(&mut Simulation, usize) -> Result<T, SimError>,
    ) -> Result<T, SimError> {
        let mut simulation = self.shared.borrow_mut();
        let result = simulation
            .begin(cost)
            .and_then(|()| simulation.check_epoch(self.epoch))
            .and_then(|()| body(&mut simulation, self.inode));
        let subject = simulation.disk.inode_name(self.inode);
        let outcome = result.as_ref().map(|_| ()).map_err(|error| *error);
        simulation.finish(operation, &subject, number, outcome)?;
        result
    }
}

impl StorageFile for SimFile {
    type Error = SimError;

    fn len(&self) -> Result<u64, SimError> {
        self.operate("length", Cost::Read, 0, |simulation, inode| Ok(simulation.disk.volatile(inode).len() as u64))
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), SimError> {
        self.operate("read", Cost::Read, offset, |simulation, inode| simulation.read_at(inode, offset, out))
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), SimError> {
        self.operate("write", Cost::Write, offset, |simulation, inode| simulation.write_at(inode, offset, bytes))
    }

    fn sync(&mut self) -> Result<(), SimError> {
        let pause = self.shared.borrow().sync_pause;
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        self.operate("sync", Cost::Sync, 0, |simulation, inode| simulation.sync(inode))
    }

    fn set_len(&mut self, length: u64) -> Result<(), SimError> {
        self.operate("set-length", Cost::Write, length, |simulation, inode| simulation.set_length(inode, length))
    }
}

#[cfg(test)]
mod tests {
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
}
