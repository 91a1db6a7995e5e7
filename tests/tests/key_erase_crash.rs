//! An Erase on an encrypted agent cut short, at each of its steps: the key table's sync, the
//! overwrite of the erased nodes' slots and its sync, the new epoch and its sync, the
//! destruction of the older epoch and its sync. The node is either still readable and the
//! Erase not acknowledged, or unreadable; never a key destroyed while the node shows alive.
//! After a reopen the erasure is complete (the erased text does not open, with the token, from
//! the current folder and the segments as they were before the Erase) and everything
//! acknowledged is there.
//!
//! Failed syncs run on every backend. The simulator also cuts the power before each storage
//! operation of the Erase and tries the fates of every change not yet synced (kept, dropped,
//! torn, garbled): every combination, or a sample where they are too many.

use cheesedb::{Error, Id, Leg, Mode, Options, Removal, Store, Token};
use cheesedb_core::codec::key_file_header::KEY_FILE_HEADER_BYTES;
use cheesedb_core::codec::key_table_file::{key_slot_offset, KEY_SLOT_BYTES};
use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path};
use cheesedb_tests::backend::Backend;
use cheesedb_tests::faulty::FaultyStorage;
use cheesedb_tests::key_recovery::{any_holds, Keys};

/// The store's first agent: the encrypted one.
const AGENT: u64 = 1;
const ERASED: &[u8] = b"erased-31f0 the user's health record";
const ERASED_MEMORY: &[u8] = b"erased-8d4c the user takes a daily pill";
const ERASED_VECTOR: [f32; 3] = [-3.434_993, 0.784_127_3, 8.738_482];
const KEPT: &[u8] = b"kept-a9e1 the user lives in Pune";
const KEPT_MEMORY: &[u8] = b"kept-52b7 the user cycles to work";
const LATE: &[u8] = b"late-0c6d written just before the Erase";

/// Bytes of an epoch slot.
const EPOCH_SLOT_BYTES: usize = 88;

fn options() -> Options {
    Options::default()
}

fn bytes_of(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|number| number.to_le_bytes()).collect()
}

/// The ids the scenario writes.
#[derive(Debug, Clone, Copy)]
struct Ids {
    kept: Id,
    doomed: Id,
    doomed_memory: Id,
    kept_memory: Id,
    late: Id,
}

/// The agent's segments, key table and epoch file as `files` hold them.
struct AgentFiles {
    segments: Vec<Vec<u8>>,
    key_table: Vec<u8>,
    epochs: Vec<u8>,
}

fn agent_files(files: &[(String, Vec<u8>)]) -> AgentFiles {
    let folder = agent_folder(AGENT);
    let find = |path: String| files.iter().find(|(name, _)| *name == path).map(|(_, bytes)| bytes.clone());
    AgentFiles {
        segments: files
            .iter()
            .filter(|(path, _)| path.starts_with(&folder) && path.ends_with(".log"))
            .map(|(_, bytes)| bytes.clone())
            .collect(),
        key_table: find(key_table_path(&folder)).expect("a key table"),
        epochs: find(epochs_path(&folder)).expect("an epoch file"),
    }
}

/// Asserts that nothing erased opens with the token from the current files and the segments
/// as they were before the Erase, while what was kept does.
fn assert_erased_for_good(token: &Token, before: &[(String, Vec<u8>)], now: &[(String, Vec<u8>)], what: &str) {
    let before = agent_files(before);
    let now = agent_files(now);
    let mut keys = Keys::from_token(token);
    keys.add_key_table(token, AGENT, &now.key_table);
    keys.add_epochs(token, AGENT, &now.epochs);
    let segments: Vec<Vec<u8>> = before.segments.into_iter().chain(now.segments).collect();
    let opened = keys.open_all(AGENT, &segments);
    for needle in [ERASED.to_vec(), ERASED_MEMORY.to_vec(), bytes_of(&ERASED_VECTOR)] {
        assert!(!any_holds(&opened, &needle), "{what}: {:?} opens", String::from_utf8_lossy(&needle));
    }
    assert!(any_holds(&opened, KEPT), "{what}: the attempt must open what was kept");
}

/// Whether the slot of `id` in `key_table` holds a key (is not all zeros).
fn slot_holds_a_key(key_table: &[u8], id: Id) -> bool {
    let start = key_slot_offset(id.get()).unwrap() as usize;
    key_table.get(start..start + KEY_SLOT_BYTES).is_some_and(|slot| slot.iter().any(|byte| *byte != 0))
}

/// Which sync of the Erase fails, and what the files show when it does.
#[derive(Debug, Clone, Copy)]
struct FailedSync {
    /// The file.
    file: &'static str,
    /// How many of its syncs succeed first.
    pass: u64,
    /// Whether the erased lot's slot was overwritten (in the cache, at least) by then.
    slot_overwritten: bool,
    /// Epoch slots in the file by then.
    epochs: usize,
}

const FAILED_SYNCS: [FailedSync; 4] = [
    // The key table's slots written with the lots, synced before any key goes.
    FailedSync { file: "/keys", pass: 0, slot_overwritten: false, epochs: 1 },
    // The overwrite of the erased nodes' slots.
    FailedSync { file: "/keys", pass: 1, slot_overwritten: true, epochs: 1 },
    // The new epoch.
    FailedSync { file: "/epochs", pass: 0, slot_overwritten: true, epochs: 2 },
    // The destruction of the older epoch.
    FailedSync { file: "/epochs", pass: 1, slot_overwritten: true, epochs: 2 },
];

/// The scenario's writes, through any handle: two lots, a memory on both with a vector, a
/// memory on the kept lot, and a last lot whose key table slot is not synced yet.
fn write_scenario<S: cheesedb::SharedStorage>(alice: &cheesedb::Agent<S>) -> Ids {
    let kept = alice.add_lot("user_message", KEPT).unwrap();
    let doomed = alice.add_lot("health_tool", ERASED).unwrap();
    let doomed_memory = alice.remember(ERASED_MEMORY, &[Leg::from([doomed, kept])]).unwrap();
    alice.set_vector(doomed_memory, &ERASED_VECTOR).unwrap();
    let kept_memory = alice.remember(KEPT_MEMORY, &[Leg::from([kept])]).unwrap();
    let late = alice.add_lot("user_message", LATE).unwrap();
    Ids { kept, doomed, doomed_memory, kept_memory, late }
}

/// Checks the agent after a reopen: the erasure done, everything acknowledged there.
fn assert_done_after_reopen<S: cheesedb::SharedStorage>(alice: &cheesedb::Agent<S>, ids: Ids, what: &str) {
    for id in [ids.doomed, ids.doomed_memory] {
        let node = alice.audit(id).unwrap();
        assert!(!node.is_alive(), "{what}: {id} alive");
        assert_eq!(node.content(), None, "{what}: {id} readable");
    }
    for (id, content) in [(ids.kept, KEPT), (ids.kept_memory, KEPT_MEMORY), (ids.late, LATE)] {
        assert_eq!(alice.get(id).unwrap().content(), Some(content), "{what}: {id}");
    }
    assert!(!alice.has_vector(ids.kept_memory).unwrap());
    assert!(alice.search_vector(&ERASED_VECTOR, 5).unwrap().is_empty(), "{what}: the erased vector is found");
    alice.verify().unwrap_or_else(|error| panic!("{what}: verify: {error}"));
}

fn an_erase_whose_sync_fails_is_not_acknowledged_and_is_finished_at_open<B: Backend>() {
    for failed in FAILED_SYNCS {
        let what = format!("{failed:?}");
        let place = B::new();
        let storage = FaultyStorage::wrap(place.storage());
        let faults = storage.faults.clone();
        let store = Store::open_with(storage, options()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let alice = store.open_agent(&token).unwrap();
        let ids = write_scenario(&alice);
        let before = place.files();

        faults.fail_syncs_of(failed.file, failed.pass);
        match alice.recall(ids.doomed, Mode::Fair, Removal::Erase) {
            Err(Error::OutcomeUnknown { path, .. }) => assert!(path.ends_with(failed.file), "{what}: {path}"),
            other => panic!("{what}: the Erase must not be acknowledged, got {other:?}"),
        }
        faults.heal_syncs();
        // The handle shows the recall (its record is durable) and takes no more writes. The
        // erased lot never shows alive; its text is either still there or unreadable.
        assert_eq!(alice.add_lot("after", b"refused"), Err(Error::Poisoned));
        let node = alice.audit(ids.doomed);
        assert!(node.as_ref().is_ok_and(|node| !node.is_alive()), "{what}: {node:?}");
        let content = node.unwrap().content().map(<[u8]>::to_vec);
        assert!(content.is_none() || content.as_deref() == Some(ERASED), "{what}: {content:?}");
        assert_eq!(alice.get(ids.kept).unwrap().content(), Some(KEPT), "{what}");
        drop((alice, store));
        // Closed, every write made has reached the files (io_uring queues them until then): they
        // show which step the failed sync stopped.
        let folder = agent_folder(AGENT);
        let key_table = place.read_file(&key_table_path(&folder));
        assert_eq!(!slot_holds_a_key(&key_table, ids.doomed), failed.slot_overwritten, "{what}: the step reached");
        let epochs = place.read_file(&epochs_path(&folder));
        assert_eq!((epochs.len() - KEY_FILE_HEADER_BYTES) / EPOCH_SLOT_BYTES, failed.epochs, "{what}: epochs");

        let store = place.open(options()).unwrap();
        let alice = store.open_agent(&token).unwrap();
        assert_done_after_reopen(&alice, ids, &what);
        assert_erased_for_good(&token, &before, &place.files(), &what);
        alice.add_lot("after", b"writes go on").unwrap();
    }
}

cheesedb_tests::conformance!(an_erase_whose_sync_fails_is_not_acknowledged_and_is_finished_at_open);

/// The simulator's power cuts, with the engine alone (no threads): every crash point of the
/// Erase, every fate of what was not synced.
mod power_cuts {
    use super::*;
    use cheesedb_core::{AgentEngine, StoreEngine};
    use cheesedb_sim::random::Random;
    use cheesedb_sim::storage::{Fate, PendingChange, SimStorage};

    /// The most combinations of fates tried at one crash point; past it, a sample.
    const COMBINATIONS_MAX: usize = 48;

    /// A durable store with the scenario written, except its last lot, which the explored
    /// action writes first (so its key table slot is not synced when the Erase starts).
    struct Scenario {
        storage: SimStorage,
        token: Token,
        ids: Ids,
        before: Vec<(String, Vec<u8>)>,
    }

    fn files(storage: &SimStorage) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = storage
            .file_paths()
            .into_iter()
            .filter_map(|path| storage.file_bytes(&path).map(|bytes| (path, bytes)))
            .collect();
        files.sort();
        files
    }

    fn open(storage: &SimStorage, token: &Token) -> Result<AgentEngine<SimStorage>, Error> {
        let store = StoreEngine::open(storage.clone(), options())?;
        store.open_agent(store.authenticate(token)?)
    }

    fn prepare(snapshot: bool) -> Scenario {
        let storage = SimStorage::without_faults(0x5eed_e4a5);
        let mut store = StoreEngine::open(storage.clone(), options()).unwrap();
        let token = store.create_encrypted_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let kept = alice.add_lot("user_message", KEPT).unwrap();
        let doomed = alice.add_lot("health_tool", ERASED).unwrap();
        let doomed_memory = alice.remember(ERASED_MEMORY, &[Leg::from([doomed, kept])]).unwrap();
        alice.set_vector(doomed_memory, &ERASED_VECTOR).unwrap();
        let kept_memory = alice.remember(KEPT_MEMORY, &[Leg::from([kept])]).unwrap();
        if snapshot {
            alice.snapshot().unwrap();
        }
        drop((alice, store));
        storage.crash_with(&vec![Fate::Keep; storage.pending_changes().len()]);
        let before = files(&storage);
        let ids = Ids { kept, doomed, doomed_memory, kept_memory, late: Id::from(kept_memory.get() + 1) };
        Scenario { storage, token, ids, before }
    }

    /// Opens the agent, writes the last lot, then erases with the power cut after `crash_point`
    /// operations (never, with `None`); returns whether the Erase was acknowledged.
    fn act(disk: &SimStorage, scenario: &Scenario, crash_point: Option<u64>) -> bool {
        let mut alice = open(disk, &scenario.token).unwrap();
        assert_eq!(alice.add_lot("user_message", LATE).unwrap(), scenario.ids.late);
        if let Some(point) = crash_point {
            disk.arm_crash(point);
        }
        let acknowledged = alice.recall(scenario.ids.doomed, Mode::Fair, Removal::Erase).is_ok();
        disk.power_off();
        acknowledged
    }

    fn fates_of(change: &PendingChange) -> Vec<Fate> {
        match change {
            PendingChange::Write { length, .. } => {
                vec![Fate::Drop, Fate::Keep, Fate::Prefix(length / 2), Fate::Garble(*length)]
            }
            PendingChange::SetLength { .. } | PendingChange::Name { .. } => vec![Fate::Drop, Fate::Keep],
        }
    }

    /// Every combination of fates of `pending`, or `COMBINATIONS_MAX` drawn at random.
    fn combinations(pending: &[PendingChange], random: &mut Random) -> Vec<Vec<Fate>> {
        let choices: Vec<Vec<Fate>> = pending.iter().map(fates_of).collect();
        let total = choices.iter().try_fold(1usize, |product, options| product.checked_mul(options.len()));
        match total {
            Some(total) if total <= COMBINATIONS_MAX => (0..total)
                .map(|mut index| {
                    choices
                        .iter()
                        .map(|options| {
                            let fate = options[index % options.len()];
                            index /= options.len();
                            fate
                        })
                        .collect()
                })
                .collect(),
            _ => (0..COMBINATIONS_MAX)
                .map(|_| choices.iter().map(|options| options[random.index(options.len())]).collect())
                .collect(),
        }
    }

    /// What a crash state showed of the erased lot.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Found {
        /// Alive and readable: the recall never reached the disk.
        Before,
        /// Recalled and unreadable.
        Erased,
    }

    /// Opens a crash state and checks it.
    fn check(scenario: &Scenario, disk: &SimStorage, acknowledged: bool) -> Result<Found, String> {
        let ids = scenario.ids;
        let key_files = |disk: &SimStorage| -> Vec<(String, Vec<u8>)> {
            let key_file = |path: &String| path.ends_with("/keys") || path.ends_with("/epochs");
            files(disk).into_iter().filter(|(path, _)| key_file(path)).collect()
        };
        let crashed = key_files(disk);
        let alice = open(disk, &scenario.token).map_err(|error| format!("open: {error}"))?;
        // Whatever open changed in the key files is a repair, and the report says so.
        if key_files(disk) != crashed && !alice.report().repaired_anything() {
            return Err(format!("open changed the key files and reported no repair: {:?}", alice.report()));
        }
        let doomed = alice.audit(ids.doomed).map_err(|error| format!("audit of the erased lot: {error}"))?;
        let found = match (doomed.is_alive(), doomed.content()) {
            (true, Some(ERASED)) if !acknowledged => Found::Before,
            (false, None) => Found::Erased,
            (alive, content) => {
                return Err(format!("erased lot alive {alive}, content {content:?}, acknowledged {acknowledged}"));
            }
        };
        let memory = alice.audit(ids.doomed_memory).map_err(|error| format!("audit of the memory: {error}"))?;
        let expected = if found == Found::Before { Some(ERASED_MEMORY) } else { None };
        if memory.is_alive() != (found == Found::Before) || memory.content() != expected {
            return Err(format!("the memory on the erased lot disagrees with it: {memory:?}"));
        }
        for (id, content) in [(ids.kept, KEPT), (ids.kept_memory, KEPT_MEMORY), (ids.late, LATE)] {
            let node = alice.get(id).map_err(|error| format!("get {id}: {error}"))?;
            if node.content() != Some(content) {
                return Err(format!("acknowledged {id} reads {:?}", node.content()));
            }
        }
        alice.verify().map_err(|error| format!("verify: {error}"))?;
        if found == Found::Erased {
            assert_erased_for_good(&scenario.token, &scenario.before, &files(disk), "a crash state");
        }
        // What the open served must survive another crash that drops everything unsynced.
        drop(alice);
        disk.crash_with(&vec![Fate::Drop; disk.pending_changes().len()]);
        let again = open(disk, &scenario.token).map_err(|error| format!("open after a second crash: {error}"))?;
        let doomed_again = again.audit(ids.doomed).map_err(|error| format!("audit again: {error}"))?;
        if (doomed_again.is_alive(), doomed_again.content()) != (doomed.is_alive(), doomed.content()) {
            return Err(format!("a second crash changed the erased lot: {doomed_again:?}"));
        }
        Ok(found)
    }

    fn explore(snapshot: bool) {
        let scenario = prepare(snapshot);
        assert!(act(&scenario.storage.fork(), &scenario, None), "the Erase succeeds without a crash");
        // The storage operations of the Erase alone, counted on a copy.
        let ran = {
            let disk = scenario.storage.fork();
            let mut alice = open(&disk, &scenario.token).unwrap();
            alice.add_lot("user_message", LATE).unwrap();
            let begin = disk.operation_count();
            alice.recall(scenario.ids.doomed, Mode::Fair, Removal::Erase).unwrap();
            disk.operation_count() - begin
        };
        assert!(ran >= 8, "the Erase takes {ran} operations");
        let mut random = Random::seeded(0x5eed_e4a5);
        let (mut states, mut before, mut erased) = (0, 0, 0);
        for crash_point in 0..=ran {
            let disk = scenario.storage.fork();
            let acknowledged = act(&disk, &scenario, Some(crash_point));
            let pending = disk.pending_changes();
            for fates in combinations(&pending, &mut random) {
                let crashed = disk.fork();
                crashed.crash_with(&fates);
                let found = check(&scenario, &crashed, acknowledged).unwrap_or_else(|message| {
                    panic!("snapshot {snapshot}, crash after {crash_point} operations, fates {fates:?}: {message}")
                });
                states += 1;
                match found {
                    Found::Before => before += 1,
                    Found::Erased => erased += 1,
                }
            }
        }
        assert!(before > 0 && erased > 0, "states before {before}, erased {erased}");
        assert!(states > ran, "{states} crash states");
    }

    #[test]
    fn every_crash_state_of_an_erase_is_before_it_or_erased_for_good() {
        explore(false);
    }

    #[test]
    fn every_crash_state_of_an_erase_after_a_snapshot_is_before_it_or_erased_for_good() {
        explore(true);
    }
}
