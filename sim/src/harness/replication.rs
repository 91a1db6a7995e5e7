//! The replication part of a run: one agent (plaintext or encrypted) written, recalled with
//! Erase, compacted and crashed, shipped by the core's [`AgentShipper`] to a [`SimBucket`] that
//! loses, delays, duplicates and reorders requests and may lie in its LIST answers, with a second
//! shipper racing it, a follower applying what it ships, heads that lie about their grant, and
//! at the end a forged head (the shipped history of a copy of the store that went its own way).
//! A neighbour agent of the same store is shipped once at the start, and foreign objects (of no
//! replica of the primary) are planted in the bucket.
//!
//! After every ship, and at the end:
//!
//! - (a) the bucket's head names a commit point of the primary's log, and every object it
//!   names is there with its digest; every foreign object is still there;
//! - (b) a restore of the bucket's prefix into a fresh store succeeds, verifies to the head, and
//!   its files hold the bytes the head names;
//! - (c) the follower's files verify and hold a commit point of the primary's log, after every
//!   step, the forged head's included (which the real follower refuses as `Corrupt`), and hold
//!   the bytes of the head they were brought to;
//! - (d) once a ship that began after an Erase ends with no deletion pending, no object in the
//!   bucket holds the erased text, nor any file of a restore or of a follower brought to that
//!   head or a later one;
//! - (e) the second shipper is fenced or ships the primary's own history: (a) holds whatever it
//!   did;
//! - (f) a head that lies about its token hash (the neighbour's), its agent number or its
//!   encrypted flag is refused as `Corrupt` by a restore (which then adopts nothing) and by the
//!   follower (whose files stay as they were).
//!
//! The part has its own disk, bucket and stream of chance, so it changes nothing of the rest of
//! the seed's run.

use cheesedb_core::digest::replica_piece_digest;
use cheesedb_core::log::names::agent_folder;
use cheesedb_core::replica::{
    agent_prefix, check_head_grants, fetch_head, find_commit_point, head_key, list_replica, parse_head, piece_key,
    restore_agent_files, AgentShipper, Bucket, BucketError, Follower, Owner, ReplicaHead, ReplicaPrefix,
};
use cheesedb_core::{AgentEngine, AgentEntry, Error, Fingerprint, Id, Leg, Mode, Options, Removal, StoreEngine, Token};

use super::RunStats;
use crate::bucket::{BucketFaults, GrantLie, ListLie, SimBucket};
use crate::random::Random;
use crate::storage::SimStorage;

/// Seeds whose run has a replication part: one in this many.
const ONE_SEED_IN: u64 = 6;
/// Steps of the replication part.
const STEPS: u64 = 50;
/// The name of the agent shipped.
const AGENT_NAME: &str = "shipped";
/// The name of the agent of the same store shipped once at the start: its token hash and number
/// are what a lying head claims.
const NEIGHBOUR_NAME: &str = "neighbour";
/// What every planted foreign object holds.
const FOREIGN_BYTES: &[u8] = b"an object of no replica of this store";

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
    /// The version of the head its files were last brought to.
    applied_version: u64,
}

/// The neighbour agent's grant, as the catalog keeps it.
struct Neighbour {
    number: u64,
    token_hash: [u8; 32],
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
    encrypted: bool,
    /// The shipped agent's token: an encrypted agent opens only with it.
    token: Token,
    neighbour: Neighbour,
    /// Live nodes and the marker their content carries.
    alive: Vec<(Id, Vec<u8>)>,
    next_serial: u64,
    /// Markers of erased nodes no completed ship has removed yet.
    erased_pending: Vec<Vec<u8>>,
    /// Markers of erased nodes that must never be in the bucket again, each with the version of
    /// the head the ship that settled it wrote: no copy brought to that head or a later one may
    /// hold it either.
    erased_settled: Vec<(Vec<u8>, u64)>,
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
    let encrypted = random.chance(0.5);
    let created = if encrypted { store.create_encrypted_agent(AGENT_NAME) } else { store.create_agent(AGENT_NAME) };
    let token = created.map_err(|error| format!("create: {error}"))?;
    let key = store.authenticate(&token).map_err(|error| format!("authenticate: {error}"))?;
    let engine = store.open_agent(key).map_err(|error| format!("open agent: {error}"))?;
    let entry = |name: &str| {
        store
            .replicated_entries()
            .into_iter()
            .find(|entry| entry.name == name)
            .ok_or("the catalog lacks an agent just created")
    };
    let shipped = entry(AGENT_NAME)?;
    let prefix = ReplicaPrefix::new(if random.chance(0.5) { "fleet/one" } else { "" });
    let mut bucket = bucket;
    let neighbour = start_neighbour(&mut store, &mut bucket, &prefix, &mut random)?;
    plant_foreign_objects(&mut bucket, &prefix);
    bucket.set_list_lie(ListLie::draw(&mut random));
    let mut part = Replication {
        seed,
        random,
        options,
        disk,
        store: Some(store),
        engine: Some(engine),
        number: shipped.number,
        token_hash: shipped.token_hash,
        encrypted,
        token,
        neighbour,
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
    part.stats.encrypted_replicas += u64::from(part.encrypted);
    stats.merge(&part.stats);
    result
}

/// Creates the neighbour agent in the primary's store, writes one lot and ships it once,
/// without faults: its head stays in the bucket, beside the shipped agent's.
fn start_neighbour(
    store: &mut StoreEngine<SimStorage>,
    bucket: &mut SimBucket,
    prefix: &ReplicaPrefix,
    random: &mut Random,
) -> Checked<Neighbour> {
    let token = store.create_agent(NEIGHBOUR_NAME).map_err(|error| format!("create the neighbour: {error}"))?;
    let key = store.authenticate(&token).map_err(|error| format!("authenticate the neighbour: {error}"))?;
    let mut engine = store.open_agent(key).map_err(|error| format!("open the neighbour: {error}"))?;
    engine.add_lot("source", b"the neighbour's text").map_err(|error| format!("write the neighbour: {error}"))?;
    let entry = store
        .replicated_entries()
        .into_iter()
        .find(|entry| entry.name == NEIGHBOUR_NAME)
        .ok_or("the catalog lacks the neighbour")?;
    let mut shipper = AgentShipper::new(prefix.clone(), entry.clone(), random.next_u64());
    bucket.set_faults(false);
    let shipped = shipper
        .load_head(bucket)
        .and_then(|()| shipper.plan(store.storage(), engine.rewrite_count()))
        .and_then(|plan| match plan {
            Some(plan) => shipper.execute(bucket, plan).map(|_| ()),
            None => Ok(()),
        });
    bucket.set_faults(true);
    shipped.map_err(|error| format!("shipping the neighbour: {error}"))?;
    Ok(Neighbour { number: entry.number, token_hash: entry.token_hash })
}

/// Objects of no replica of the primary: another tenant's, one in the shipped agent's own
/// folder of no shape a shipper writes, another prefix's head, and a piece of another agent of
/// the same prefix that has no head.
fn plant_foreign_objects(bucket: &mut SimBucket, prefix: &ReplicaPrefix) {
    let someone_else = agent_prefix(prefix, Owner::agent("someone-else"));
    for key in [
        String::from("victim/keep-me"),
        format!("{}keep-me", agent_prefix(prefix, Owner::agent(AGENT_NAME))),
        head_key(&ReplicaPrefix::new("other-store"), Owner::agent(AGENT_NAME)),
        format!("{someone_else}keys/0000000000000000-0000000000000040-0000000000000001"),
    ] {
        bucket.plant_foreign(&key, FOREIGN_BYTES);
    }
}

/// Restores every agent under `prefix` into `store`, as `cheesedb restore` does: the heads a
/// LIST names (by their shape), their grants checked against each other and the store's, then
/// each agent adopted. Returns each agent's name and fingerprint.
fn restore_prefix(
    store: &mut StoreEngine<SimStorage>,
    bucket: &mut SimBucket,
    prefix: &ReplicaPrefix,
) -> Result<Vec<(String, Fingerprint)>, Error> {
    let listing = list_replica(bucket, prefix)?;
    let mut heads = Vec::new();
    for key in &listing.heads {
        if let Some((bytes, _)) = bucket.get(key).map_err(BucketError::into_error)? {
            heads.push(parse_head(prefix, key, &bytes)?);
        }
    }
    heads.sort_by_key(|head| head.agent);
    check_head_grants(prefix, &heads, &store.replicated_entries())?;
    let mut restored = Vec::new();
    for head in &heads {
        let fingerprint = store.adopt(head, |storage| restore_agent_files(storage, bucket, prefix, head, None))?;
        restored.push((head.name.clone(), fingerprint));
    }
    Ok(restored)
}

/// Checks that the files in `disk` hold, at every piece the head names, the piece's bytes.
fn check_files_hold_head(disk: &SimStorage, head: &ReplicaHead, whose: &str) -> Checked {
    let folder = agent_folder(head.agent);
    for piece in &head.pieces {
        let path = format!("{folder}/{}", piece.file);
        let bytes = disk
            .file_bytes(&path)
            .ok_or_else(|| format!("{whose} lacks the file {path} head version {} names", head.version))?;
        let held = usize::try_from(piece.start)
            .ok()
            .zip(usize::try_from(piece.end).ok())
            .and_then(|(start, end)| bytes.get(start..end));
        if held.map(replica_piece_digest) != Some(piece.digest) {
            return Err(format!(
                "{whose}'s {path} differs at [{}, {}) from the bytes head version {} names",
                piece.start, piece.end, head.version
            ));
        }
    }
    Ok(())
}

impl Replication {
    fn run_steps(&mut self) -> Checked {
        for _ in 0..STEPS {
            let choice = self.random.weighted(&[30, 6, 3, 20, 5, 4, 4, 6, 3, 2, 3]);
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
                9 => self.take_fork()?,
                _ => self.check_lying_head()?,
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
        self.check_lying_head()?;
        self.forge_head()
    }

    /// The shipped agent's engine over `store`: by its token when it is encrypted.
    fn open_engine(&self, store: &StoreEngine<SimStorage>) -> Result<AgentEngine<SimStorage>, Error> {
        if self.encrypted {
            store.authenticate(&self.token).and_then(|key| store.open_agent(key))
        } else {
            store.open_agent_by_number(self.number)
        }
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
        let engine = self.open_engine(&store).map_err(|error| format!("reopen agent: {error}"))?;
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
        let run = self.random.next_u64();
        let entry = AgentEntry {
            number: self.number,
            name: String::from(AGENT_NAME),
            token_hash: self.token_hash,
            encrypted: self.encrypted,
            space: false,
        };
        AgentShipper::new(self.prefix.clone(), entry, run)
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
            let version = self.bucket_head()?.map_or(0, |head| head.version);
            let settled: Vec<Vec<u8>> = self.erased_pending.drain(..erased_before).collect();
            self.erased_settled.extend(settled.into_iter().map(|marker| (marker, version)));
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
        let head = fetch_head(&mut self.bucket, &self.prefix, Owner::agent(AGENT_NAME));
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
            let key = piece_key(&self.prefix, Owner::agent(AGENT_NAME), piece);
            match self.bucket.object(&key) {
                Some(bytes) if replica_piece_digest(bytes) == piece.digest => {}
                Some(_) => return Err(format!("the object {key} the head names differs from its digest")),
                None => return Err(format!("the object {key} the head names is missing")),
            }
        }
        if let Some(key) = self.bucket.foreign_objects_lost(FOREIGN_BYTES).first() {
            return Err(format!(
                "the object {key}, of no replica of this store, was deleted (the LIST answers lie: {:?})",
                self.bucket.list_lie()
            ));
        }
        self.stats.replica_heads_checked += 1;
        Ok(())
    }

    /// (d): no object holds the text of an Erase a completed ship followed.
    fn check_erased_text(&self) -> Checked {
        for (key, bytes) in self.bucket.objects() {
            for (marker, _) in &self.erased_settled {
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

    /// (d), in files: no file of `disk`, brought to head version `version`, holds a text whose
    /// erasure a head of that version or an earlier one settled.
    fn check_no_erased_text_in(&self, disk: &SimStorage, version: u64, whose: &str) -> Checked {
        let mut found = None;
        disk.visit_images(|path, bytes| {
            for (marker, settled) in &self.erased_settled {
                let holds = bytes.windows(marker.len()).any(|window| window == marker.as_slice());
                if *settled <= version && holds && found.is_none() {
                    found = Some(format!(
                        "{whose}'s file {path} (at head version {version}) holds erased text {}",
                        String::from_utf8_lossy(marker)
                    ));
                }
            }
        });
        found.map_or(Ok(()), Err)
    }

    /// (b): the bucket's prefix restores into a fresh store, verified to its head, its files the
    /// bytes the head names. Returns the copy.
    fn check_restore(&mut self) -> Checked<Option<(FollowerCopy, ReplicaHead)>> {
        let Some(head) = self.bucket_head()? else { return Ok(None) };
        let disk = SimStorage::without_faults(self.random.next_u64());
        let mut store =
            StoreEngine::open(disk.clone(), self.options.clone()).map_err(|error| format!("a fresh store: {error}"))?;
        self.bucket.set_faults(false);
        let restored = restore_prefix(&mut store, &mut self.bucket, &self.prefix);
        self.bucket.set_faults(true);
        let restored = restored.map_err(|error| format!("restoring head version {}: {error}", head.version))?;
        let Some((_, restored)) = restored.into_iter().find(|(name, _)| name == AGENT_NAME) else {
            return Err(format!("a restore of the prefix left out the agent of head version {}", head.version));
        };
        if store.agent_number(NEIGHBOUR_NAME).is_err() {
            return Err("a restore of the prefix left out the neighbour".to_string());
        }
        if restored != head.fingerprint {
            return Err(format!("a restore verified to {restored:?}, its head names {:?}", head.fingerprint));
        }
        let verified =
            store.verify_agent_without_token(AGENT_NAME).map_err(|error| format!("verifying a restore: {error}"))?;
        if verified != head.fingerprint {
            return Err(format!("a restored agent verifies to {verified:?}, its head names {:?}", head.fingerprint));
        }
        check_files_hold_head(&disk, &head, "a restore")?;
        self.check_no_erased_text_in(&disk, head.version, "a restore")?;
        self.stats.restores_checked += 1;
        let follower = Follower::start(&disk, self.prefix.clone(), &head)
            .map_err(|error| format!("starting a follower on a restore: {error}"))?;
        Ok(Some((FollowerCopy { disk, store, follower, applied_version: head.version }, head)))
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
        if let Some(head) = self.bucket_head()? {
            // The step read this very head (nothing was shipped since): the files hold it now.
            copy.applied_version = head.version;
            if copy.follower.held() != head.fingerprint {
                return Err(format!(
                    "the follower holds {:?} after a step to head version {}",
                    copy.follower.held(),
                    head.version
                ));
            }
            check_files_hold_head(&copy.disk, &head, "the follower")?;
        }
        self.check_no_erased_text_in(&copy.disk, copy.applied_version, "the follower")?;
        self.stats.follower_steps += 1;
        self.follower = Some(copy);
        Ok(())
    }

    /// (f): the bucket's head read with one access fact altered (its checksum recomputed):
    /// a restore of the prefix refuses it and adopts nothing; the follower refuses it and keeps
    /// its files.
    fn check_lying_head(&mut self) -> Checked {
        if self.bucket_head()?.is_none() {
            return Ok(());
        }
        let lie = match self.random.below(3) {
            0 => GrantLie::TokenHash(self.neighbour.token_hash),
            1 => GrantLie::AgentNumber(self.neighbour.number),
            _ => GrantLie::EncryptedFlipped,
        };
        let disk = SimStorage::without_faults(self.random.next_u64());
        let mut store =
            StoreEngine::open(disk.clone(), self.options.clone()).map_err(|error| format!("a fresh store: {error}"))?;
        self.bucket.set_faults(false);
        self.bucket.set_head_lie(Some((head_key(&self.prefix, Owner::agent(AGENT_NAME)), lie)));
        let restored = restore_prefix(&mut store, &mut self.bucket, &self.prefix);
        let stepped = self.follower.as_mut().map(|copy| copy.follower.step(&copy.disk, &mut self.bucket));
        self.bucket.set_head_lie(None);
        self.bucket.set_faults(true);
        match restored {
            Err(Error::Corrupt { .. }) => {}
            Err(error) => {
                return Err(format!("a restore met a head lying {lie:?} and failed, not as corrupt: {error}"))
            }
            Ok(_) => return Err(format!("a restore adopted a head lying {lie:?}: it believed the head's grant")),
        }
        if !store.replicated_entries().is_empty() {
            return Err(format!("a restore refused a head lying {lie:?} but adopted {:?}", store.agent_names()));
        }
        match stepped {
            None | Some(Err(Error::Corrupt { .. })) => {}
            Some(Err(error)) => {
                return Err(format!("a follower met a head lying {lie:?} and failed, not as corrupt: {error}"))
            }
            Some(Ok(_)) => return Err(format!("a follower applied a head lying {lie:?}")),
        }
        if let Some(copy) = self.follower.as_ref() {
            self.check_follower(copy)?;
        }
        self.stats.lying_heads_refused += 1;
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
        let mut engine = self.open_engine(&store).map_err(|error| format!("the fork's agent: {error}"))?;
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
        let Some(mut forged) = fetch_head(&mut other_bucket, &self.prefix, Owner::agent(AGENT_NAME))
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
        let head_key = cheesedb_core::replica::head_key(&self.prefix, Owner::agent(AGENT_NAME));
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
