//! The replication part of a run: one agent written, recalled with Erase, compacted and crashed,
//! shipped by the core's [`AgentShipper`] to a [`SimBucket`] that loses, delays, duplicates and
//! reorders requests, with a second shipper racing it, a follower applying what it ships, and
//! at the end a forged head (the shipped history of a copy of the store that went its own way).
//!
//! After every ship, and at the end:
//!
//! - (a) the bucket's head names a commit point of the primary's log, and every object it
//!   names is there with its digest;
//! - (b) a restore of the bucket into a fresh store succeeds and verifies to the head;
//! - (c) the follower's files verify and hold a commit point of the primary's log, after every
//!   step, the forged head's included (which the real follower refuses as `Corrupt`);
//! - (d) once a ship that began after an Erase ends with no deletion pending, no object in the
//!   bucket holds the erased text;
//! - (e) the second shipper is fenced or ships the primary's own history: (a) holds whatever it
//!   did.
//!
//! The part has its own disk, bucket and stream of chance, so it changes nothing of the rest of
//! the seed's run.

use cheesedb_core::digest::replica_piece_digest;
use cheesedb_core::replica::ReplicaHead;
use cheesedb_core::replica::{
    fetch_head, find_commit_point, piece_key, restore_agent_files, AgentShipper, Follower, ReplicaPrefix,
};
use cheesedb_core::{AgentEngine, Error, Fingerprint, Id, Leg, Mode, Options, Removal, StoreEngine};

use super::RunStats;
use crate::bucket::{BucketFaults, SimBucket};
use crate::random::Random;
use crate::storage::SimStorage;

/// Seeds whose run has a replication part: one in this many.
const ONE_SEED_IN: u64 = 6;
/// Steps of the replication part.
const STEPS: u64 = 50;
/// The name of the agent shipped.
const AGENT_NAME: &str = "shipped";

/// Whether the run of `seed` has a replication part: by a hash of the seed, not a draw, so that
/// the rest of the run draws what it drew before.
pub(crate) fn chosen(seed: u64) -> bool {
    let mixed = (seed ^ 0x5f0e_d1e5_7a11_b0a7).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 32) % ONE_SEED_IN == 0
}

/// A broken promise of the replication part.
type Checked<T = ()> = Result<T, String>;

/// A restored copy of the agent that follows the bucket.
struct FollowerCopy {
    disk: SimStorage,
    store: StoreEngine<SimStorage>,
    follower: Follower,
}

/// The primary's disk as it was at one point, for the forged head.
struct Fork {
    disk: SimStorage,
    point: Fingerprint,
}

struct Replication {
    seed: u64,
    random: Random,
    options: Options,
    disk: SimStorage,
    store: Option<StoreEngine<SimStorage>>,
    engine: Option<AgentEngine<SimStorage>>,
    number: u64,
    token_hash: [u8; 32],
    /// Live nodes and the marker their content carries.
    alive: Vec<(Id, Vec<u8>)>,
    next_serial: u64,
    /// Markers of erased nodes no completed ship has removed yet.
    erased_pending: Vec<Vec<u8>>,
    /// Markers of erased nodes that must never be in the bucket again.
    erased_settled: Vec<Vec<u8>>,
    bucket: SimBucket,
    prefix: ReplicaPrefix,
    shipper: Option<AgentShipper>,
    follower: Option<FollowerCopy>,
    fork: Option<Fork>,
    stats: RunStats,
}

/// Runs the replication part of the run of `seed`, adding its counts to `stats`.
pub(crate) fn run(seed: u64, stats: &mut RunStats) -> Checked {
    let mut random = Random::seeded(seed ^ 0x7265_706c_6963_6121);
    let faults = BucketFaults::draw(&mut random);
    let bucket = SimBucket::new(faults, random.fork());
    let disk = SimStorage::without_faults(random.next_u64());
    let segment_size_max_bytes = *random.pick(&[4096, 16 * 1024]).unwrap_or(&4096);
    let options = Options::default().segment_size_max_bytes(segment_size_max_bytes).preallocate_bytes(0);
    let mut store = StoreEngine::open(disk.clone(), options.clone()).map_err(|error| format!("open: {error}"))?;
    let token = store.create_agent(AGENT_NAME).map_err(|error| format!("create: {error}"))?;
    let key = store.authenticate(&token).map_err(|error| format!("authenticate: {error}"))?;
    let engine = store.open_agent(key).map_err(|error| format!("open agent: {error}"))?;
    let entry = store
        .agent_entries()
        .into_iter()
        .find(|entry| entry.name == AGENT_NAME)
        .ok_or("the catalog lacks the agent just created")?;
    let prefix = ReplicaPrefix::new(if random.chance(0.5) { "fleet/one" } else { "" });
    let mut part = Replication {
        seed,
        random,
        options,
        disk,
        store: Some(store),
        engine: Some(engine),
        number: entry.number,
        token_hash: entry.token_hash,
        alive: Vec::new(),
        next_serial: 1 << 24,
        erased_pending: Vec::new(),
        erased_settled: Vec::new(),
        bucket,
        prefix,
        shipper: None,
        follower: None,
        fork: None,
        stats: RunStats { replication_runs: 1, ..RunStats::default() },
    };
    let result = part.run_steps();
    part.stats.bucket_faults = part.bucket.fault_counts().total();
    stats.merge(&part.stats);
    result
}

impl Replication {
    fn run_steps(&mut self) -> Checked {
        for _ in 0..STEPS {
            let choice = self.random.weighted(&[30, 6, 3, 20, 5, 4, 4, 6, 3, 2]);
            match choice {
                0 => self.write()?,
                1 => self.erase()?,
                2 => self.compact()?,
                3 => {
                    self.ship()?;
                }
                4 => self.race_second_shipper()?,
                5 => self.crash_during_write()?,
                6 => self.shipper = None,
                7 => self.step_follower()?,
                8 => {
                    self.check_restore()?;
                }
                _ => self.take_fork()?,
            }
        }
        // The end: ship until one completes, then every check, then the forged head.
        for _ in 0..20 {
            if self.ship()? {
                break;
            }
        }
        self.check_head()?;
        self.check_erased_text()?;
        self.check_restore()?;
        self.step_follower()?;
        self.forge_head()
    }

    fn engine(&mut self) -> Checked<&mut AgentEngine<SimStorage>> {
        self.engine.as_mut().ok_or_else(|| "harness error: the agent is not open".to_string())
    }

    /// A lot, or a memory with a live parent, carrying a fresh marker.
    fn write(&mut self) -> Checked {
        let serial = self.next_serial;
        self.next_serial += 1;
        let content = crate::canary::content(self.seed, serial, 256, &mut self.random);
        let marker = crate::canary::marker(self.seed, serial);
        let parent = self.alive.get(self.random.index(self.alive.len().max(1))).map(|(id, _)| *id);
        let engine = self.engine()?;
        let written = match parent {
            Some(parent) if serial % 2 == 0 => {
                let leg: Leg = [parent].into_iter().collect();
                engine.remember(&content, &[leg])
            }
            _ => engine.add_lot("source", &content),
        };
        match written {
            Ok(id) => {
                self.stats.acknowledged_writes += 1;
                self.alive.push((id, marker));
                Ok(())
            }
            Err(error) if !super::world::is_operating_error(&error) && !self.disk.is_powered_off() => {
                // The parent was recalled by an Erase a crash cut short and recovery finished.
                self.alive.retain(|(id, _)| Some(*id) != parent);
                Ok(())
            }
            Err(error) => self.failed("a write", error),
        }
    }

    /// A write that did not return: only a crash explains it here (the disk has no faults).
    fn failed(&mut self, what: &str, error: Error) -> Checked {
        if self.disk.is_powered_off() {
            return self.crash_and_reopen();
        }
        Err(format!("{what} failed on a disk without faults: {error}"))
    }

    fn erase(&mut self) -> Checked {
        let Some((id, _)) = self.alive.get(self.random.index(self.alive.len().max(1))).cloned() else {
            return Ok(());
        };
        match self.engine()?.recall(id, Mode::Fair, Removal::Erase) {
            Ok(removed) => {
                self.stats.acknowledged_writes += 1;
                let (gone, kept): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut self.alive).into_iter().partition(|(node, _)| removed.contains(node));
                self.alive = kept;
                self.erased_pending.extend(gone.into_iter().map(|(_, marker)| marker));
                Ok(())
            }
            // An Erase of it that a crash cut short was finished by the recovery: refused, as
            // an Erase that would change nothing, and its text is gone.
            Err(Error::AlreadyRecalled { .. }) if !self.disk.is_powered_off() => {
                let (gone, kept): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut self.alive).into_iter().partition(|(node, _)| *node == id);
                self.alive = kept;
                self.erased_pending.extend(gone.into_iter().map(|(_, marker)| marker));
                Ok(())
            }
            Err(error) => self.failed("an Erase", error),
        }
    }

    fn compact(&mut self) -> Checked {
        match self.engine()?.compact() {
            Ok(()) => Ok(()),
            Err(error) => self.failed("a compaction", error),
        }
    }

    /// A write, an Erase or a compaction cut by a power loss after a few storage operations.
    fn crash_during_write(&mut self) -> Checked {
        let countdown = self.random.below(40);
        self.disk.arm_crash(countdown);
        let done = match self.random.below(3) {
            0 => self.erase(),
            1 => self.compact(),
            _ => self.write(),
        };
        self.disk.disarm_crash();
        done?;
        // An erase cut short is in doubt: its text may or may not be gone.
        if self.random.chance(0.5) {
            self.crash_and_reopen()?;
        }
        Ok(())
    }

    /// The power goes: the primary and its shipper (same process) die; the store reopens.
    fn crash_and_reopen(&mut self) -> Checked {
        self.engine = None;
        self.store = None;
        self.shipper = None;
        self.disk.crash();
        self.stats.crashes += 1;
        let store =
            StoreEngine::open(self.disk.clone(), self.options.clone()).map_err(|error| format!("reopen: {error}"))?;
        let engine = store.open_agent_by_number(self.number).map_err(|error| format!("reopen agent: {error}"))?;
        // Nodes whose write was cut may be there or not: keep those the engine has.
        let ids: Vec<Id> = self.alive.iter().map(|(id, _)| *id).collect();
        for id in ids {
            if engine.get(id).is_err() {
                self.alive.retain(|(node, _)| *node != id);
            }
        }
        self.store = Some(store);
        self.engine = Some(engine);
        self.stats.reopens += 1;
        Ok(())
    }

    fn new_shipper(&mut self) -> AgentShipper {
        AgentShipper::new(self.prefix.clone(), AGENT_NAME, self.number, self.token_hash, false, self.random.next_u64())
    }

    /// One ship of the primary's shipper; `true` when it completed with nothing left to delete.
    fn ship(&mut self) -> Checked<bool> {
        if self.random.chance(0.1) {
            // The shipper's process dies after a few calls.
            let calls = self.random.below(12);
            self.bucket.cut_after(calls);
        }
        let mut shipper = match self.shipper.take() {
            Some(shipper) => shipper,
            None => {
                self.stats.shipper_restarts += 1;
                self.new_shipper()
            }
        };
        let erased_before = self.erased_pending.len();
        let outcome = self.ship_once(&mut shipper);
        self.bucket.drain();
        let cut = self.bucket.reconnect();
        let completed = match outcome {
            Ok(()) if shipper.deletions_pending() == 0 => {
                self.stats.ships_completed += 1;
                true
            }
            Ok(()) => false,
            Err(Error::ObjectStore { .. }) => {
                self.stats.ships_failed += 1;
                false
            }
            Err(Error::ReplicaFenced { .. }) => {
                // The second shipper moved the head: a new run starts from the head as it is.
                self.stats.shippers_fenced += 1;
                self.check_head()?;
                return Ok(false);
            }
            Err(error) => return Err(format!("a ship failed: {error}")),
        };
        if !cut {
            self.shipper = Some(shipper);
        }
        if completed {
            let settled: Vec<Vec<u8>> = self.erased_pending.drain(..erased_before).collect();
            self.erased_settled.extend(settled);
        }
        self.check_head()?;
        if completed && !self.erased_settled.is_empty() {
            self.check_erased_text()?;
        }
        Ok(completed)
    }

    fn ship_once(&mut self, shipper: &mut AgentShipper) -> Result<(), Error> {
        shipper.load_head(&mut self.bucket)?;
        let engine = self.engine.as_ref().ok_or(Error::Poisoned)?;
        // Planned while the agent takes no write, as the store does under the agent's lock.
        let plan = shipper.plan(&self.disk, engine.rewrite_count())?;
        match plan {
            Some(plan) => {
                shipper.execute(&mut self.bucket, plan)?;
            }
            None => {
                shipper.delete_pending(&mut self.bucket)?;
            }
        }
        Ok(())
    }

    /// A second shipper of the same agent on the same prefix (a second process of the store):
    /// it plans, the primary's shipper may ship meanwhile, then it carries its plan out.
    fn race_second_shipper(&mut self) -> Checked {
        let mut second = self.new_shipper();
        let engine = self.engine.as_ref().ok_or("harness error: the agent is not open")?;
        let planned = second.load_head(&mut self.bucket).and_then(|()| second.plan(&self.disk, engine.rewrite_count()));
        if self.random.chance(0.5) {
            self.ship()?;
        }
        let result = match planned {
            Ok(Some(plan)) => second.execute(&mut self.bucket, plan).map(|_| ()),
            Ok(None) => Ok(()),
            Err(error) => Err(error),
        };
        self.bucket.drain();
        match result {
            Ok(()) => self.stats.second_shipper_writes += 1,
            Err(Error::ReplicaFenced { .. }) => self.stats.second_shipper_fenced += 1,
            Err(Error::ObjectStore { .. }) => {}
            Err(error) => return Err(format!("the second shipper failed: {error}")),
        }
        self.check_head()
    }

    /// The head the bucket holds, read without faults.
    fn bucket_head(&mut self) -> Checked<Option<ReplicaHead>> {
        self.bucket.set_faults(false);
        let head = fetch_head(&mut self.bucket, &self.prefix, AGENT_NAME);
        self.bucket.set_faults(true);
        head.map(|found| found.map(|(head, _)| head)).map_err(|error| format!("the bucket's head: {error}"))
    }

    /// Whether `point` is a commit point of the primary's log.
    fn primary_holds(&self, point: Fingerprint) -> Checked<bool> {
        let found = find_commit_point(&self.disk, self.number, point.records)
            .map_err(|error| format!("reading the primary's log: {error}"))?;
        Ok(found.is_some_and(|commit| commit.chain == point.chain))
    }

    /// (a): the head names a commit point of the primary, and every object it names is there.
    fn check_head(&mut self) -> Checked {
        let Some(head) = self.bucket_head()? else { return Ok(()) };
        if !self.primary_holds(head.fingerprint)? {
            return Err(format!(
                "the bucket's head (version {}) names {} records that are not a commit point of the primary's log",
                head.version, head.fingerprint.records
            ));
        }
        for piece in &head.pieces {
            let key = piece_key(&self.prefix, AGENT_NAME, piece);
            match self.bucket.object(&key) {
                Some(bytes) if replica_piece_digest(bytes) == piece.digest => {}
                Some(_) => return Err(format!("the object {key} the head names differs from its digest")),
                None => return Err(format!("the object {key} the head names is missing")),
            }
        }
        self.stats.replica_heads_checked += 1;
        Ok(())
    }

    /// (d): no object holds the text of an Erase a completed ship followed.
    fn check_erased_text(&self) -> Checked {
        for (key, bytes) in self.bucket.objects() {
            for marker in &self.erased_settled {
                if bytes.windows(marker.len()).any(|window| window == marker.as_slice()) {
                    return Err(format!(
                        "the object {key} holds erased text {} after a ship that deleted everything",
                        String::from_utf8_lossy(marker)
                    ));
                }
            }
        }
        Ok(())
    }

    /// (b): the bucket restores into a fresh store, verified to its head. Returns the copy.
    fn check_restore(&mut self) -> Checked<Option<(FollowerCopy, ReplicaHead)>> {
        let Some(head) = self.bucket_head()? else { return Ok(None) };
        let disk = SimStorage::without_faults(self.random.next_u64());
        let mut store =
            StoreEngine::open(disk.clone(), self.options.clone()).map_err(|error| format!("a fresh store: {error}"))?;
        self.bucket.set_faults(false);
        let (bucket, prefix) = (&mut self.bucket, &self.prefix);
        let restored = store.adopt_agent(&head, |storage| restore_agent_files(storage, bucket, prefix, &head, None));
        self.bucket.set_faults(true);
        let restored = restored.map_err(|error| format!("restoring head version {}: {error}", head.version))?;
        if restored != head.fingerprint {
            return Err(format!("a restore verified to {restored:?}, its head names {:?}", head.fingerprint));
        }
        let verified =
            store.verify_agent_without_token(AGENT_NAME).map_err(|error| format!("verifying a restore: {error}"))?;
        if verified != head.fingerprint {
            return Err(format!("a restored agent verifies to {verified:?}, its head names {:?}", head.fingerprint));
        }
        self.stats.restores_checked += 1;
        let follower = Follower::start(&disk, self.prefix.clone(), &head)
            .map_err(|error| format!("starting a follower on a restore: {error}"))?;
        Ok(Some((FollowerCopy { disk, store, follower }, head)))
    }

    /// (c): the follower (started from a restore if there is none) steps to the bucket's head.
    fn step_follower(&mut self) -> Checked {
        let Some(mut copy) = self.follower.take() else {
            self.follower = self.check_restore()?.map(|(copy, _)| copy);
            return Ok(());
        };
        self.bucket.set_faults(false);
        let stepped = copy.follower.step(&copy.disk, &mut self.bucket);
        self.bucket.set_faults(true);
        stepped.map_err(|error| format!("a follower step refused the primary's own head: {error}"))?;
        self.check_follower(&copy)?;
        self.stats.follower_steps += 1;
        self.follower = Some(copy);
        Ok(())
    }

    /// The follower's files verify to what it holds, a commit point of the primary's log.
    fn check_follower(&self, copy: &FollowerCopy) -> Checked {
        let held = copy.follower.held();
        let verified = copy
            .store
            .verify_agent_without_token(AGENT_NAME)
            .map_err(|error| format!("the follower's files fail to verify: {error}"))?;
        if verified != held {
            return Err(format!("the follower's files verify to {verified:?}, it holds {held:?}"));
        }
        if !self.primary_holds(held)? {
            return Err(format!(
                "the follower holds {} records that are not a commit point of the primary's log: its history diverged",
                held.records
            ));
        }
        Ok(())
    }

    /// Keeps a copy of the primary's disk as it is durably now.
    fn take_fork(&mut self) -> Checked {
        if self.fork.is_some() {
            return Ok(());
        }
        let point = self.engine()?.head();
        let disk = self.disk.fork();
        disk.crash();
        self.fork = Some(Fork { disk, point });
        Ok(())
    }

    /// The bucket's head replaced by the shipped history of the forked copy, written further with
    /// other texts: the follower must refuse it and keep its files.
    fn forge_head(&mut self) -> Checked {
        let (Some(fork), Some(copy)) = (self.fork.take(), self.follower.as_mut()) else { return Ok(()) };
        let held = copy.follower.held();
        if held.records <= fork.point.records {
            return Ok(());
        }
        let store =
            StoreEngine::open(fork.disk.clone(), self.options.clone()).map_err(|error| format!("the fork: {error}"))?;
        let mut engine =
            store.open_agent_by_number(self.number).map_err(|error| format!("the fork's agent: {error}"))?;
        let mut serial = 1 << 40;
        while engine.head().records <= held.records + 1 {
            serial += 1;
            let content = crate::canary::content(self.seed, serial, 64, &mut self.random);
            engine.add_lot("forked", &content).map_err(|error| format!("writing the fork: {error}"))?;
        }
        let mut other_bucket = SimBucket::new(BucketFaults::default(), self.random.fork());
        let mut shipper = self.new_shipper();
        shipper
            .load_head(&mut other_bucket)
            .and_then(|()| shipper.plan(&fork.disk, engine.rewrite_count()))
            .and_then(|plan| match plan {
                Some(plan) => shipper.execute(&mut other_bucket, plan).map(|_| ()),
                None => Ok(()),
            })
            .map_err(|error| format!("shipping the fork: {error}"))?;
        let Some(mut forged) = fetch_head(&mut other_bucket, &self.prefix, AGENT_NAME)
            .map_err(|error| format!("the fork's head: {error}"))?
            .map(|(head, _)| head)
        else {
            return Err("the fork shipped no head".to_string());
        };
        let version = self.bucket_head()?.map_or(1, |head| head.version);
        forged.version = version + 1;
        for (key, bytes) in other_bucket.objects() {
            if self.bucket.object(key).is_none() {
                self.bucket.overwrite(key, bytes.to_vec());
            }
        }
        let head_key = cheesedb_core::replica::head_key(&self.prefix, AGENT_NAME);
        self.bucket.overwrite(&head_key, forged.encode());
        self.stats.forged_heads += 1;
        let Some(copy) = self.follower.as_mut() else { return Ok(()) };
        self.bucket.set_faults(false);
        let stepped = copy.follower.step(&copy.disk, &mut self.bucket);
        self.bucket.set_faults(true);
        match stepped {
            Err(Error::Corrupt { .. }) => self.stats.forged_heads_refused += 1,
            Err(error) => return Err(format!("a follower failed on a forged head: {error}")),
            Ok(_) => {}
        }
        let Some(copy) = self.follower.as_ref() else { return Ok(()) };
        self.check_follower(copy)
    }
}
