//! Exhaustive checks of the small protocols: every crash point of one operation times every
//! combination of what happened to its unsynced changes, and every single-byte corruption of a
//! sealed segment and of the catalog.

use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::codec::record;
use cheesedb_core::codec::segment_header::SEGMENT_HEADER_BYTES;
use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path, parse_segment_name, segment_path};
use cheesedb_core::{AgentEngine, Error, Id, Leg, Mode, Options, Removal, StoreEngine, Token};

use crate::canary;
use crate::compare::{compare_node, merge_uncertain, shape_matches, Mismatch};
use crate::key_oracle::{first_erased_that_opens, first_unreadable, walk_segment, KeyRing, RecordArchive};
use crate::model::{AgentModel, Text};
use crate::random::Random;
use crate::storage::{Fate, PendingChange, SimStorage};

/// The seed every exploration runs with (contents and salts come from it).
const EXPLORATION_SEED: u64 = 0x5eed;

/// A protocol whose crash states are explored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// One batch of a lot and two memories: records, commit marker, one sync.
    BatchAppend,
    /// A write that seals the full segment and starts the next before appending.
    SegmentRoll,
    /// A recall with Erase: the recall record, then the erase journal, the overwrites in place
    /// of the two records holding the text and of their commit markers, and the journal's removal.
    EraseInPlace,
    /// An Erase whose records lie in a sealed segment and in the active one, in three writes:
    /// one journal, overwrites in both segments, each synced.
    EraseInPlaceAcrossSegments,
    /// A compaction rewriting a segment without the text of recalled nodes.
    Compaction,
    /// A recall with Erase on an encrypted agent: the recall record, the key table synced, the
    /// slots of the erased nodes zeroed, synced and read back, a new epoch, the older epoch's
    /// key zeroed, synced and read back.
    EraseByKeys,
    /// The same Erase of a node recalled and compacted before (its sealed bytes are gone from
    /// the segments, not from a backup taken before the compaction).
    EraseByKeysAfterCompaction,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 7] = [
        Protocol::BatchAppend,
        Protocol::SegmentRoll,
        Protocol::EraseInPlace,
        Protocol::EraseInPlaceAcrossSegments,
        Protocol::Compaction,
        Protocol::EraseByKeys,
        Protocol::EraseByKeysAfterCompaction,
    ];

    /// Whether the protocol runs on an encrypted agent.
    pub fn is_encrypted(self) -> bool {
        matches!(self, Protocol::EraseByKeys | Protocol::EraseByKeysAfterCompaction)
    }

    /// Whether the protocol is a recall with Erase of node 1.
    fn erases(self) -> bool {
        matches!(
            self,
            Protocol::EraseInPlace
                | Protocol::EraseInPlaceAcrossSegments
                | Protocol::EraseByKeys
                | Protocol::EraseByKeysAfterCompaction
        )
    }
}

/// What an exploration covered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exploration {
    /// Storage operations of the protocol (crash points are one more: before each, and after all).
    pub operations: u64,
    /// Crash states opened and checked.
    pub crash_states: u64,
    /// States in which the operation had not happened.
    pub found_before: u64,
    /// States in which it had happened whole.
    pub found_after: u64,
    /// The most unsynced changes at one crash point.
    pub pending_max: usize,
}

/// The agent's options for explorations: small segments so a roll is cheap to reach, no
/// snapshots, little preallocation.
pub fn exploration_options() -> Options {
    Options::default().segment_size_max_bytes(4096).snapshot_after_bytes(u64::MAX).preallocate_bytes(1024)
}

/// A store with one agent, its model, and the action to explore.
struct Scenario {
    storage: SimStorage,
    number: u64,
    /// The token of an encrypted agent (a plaintext one opens by its number).
    token: Option<Token>,
    before: AgentModel,
    after: AgentModel,
    options: Options,
    /// Backups of the encrypted agent's segments taken while the scenario was built (before
    /// any recall or compaction, and just before the action).
    backups: RecordArchive,
}

fn failed(context: &str, error: impl core::fmt::Display) -> String {
    format!("{context}: {error}")
}

fn open_agent(
    storage: &SimStorage,
    number: u64,
    options: &Options,
    token: Option<&Token>,
) -> Result<AgentEngine<SimStorage>, Error> {
    let store = StoreEngine::open(storage.clone(), options.clone())?;
    match token {
        Some(token) => store.open_agent(store.authenticate(token)?),
        None => store.open_agent_by_number(number),
    }
}

/// Keeps in `backups` the sealed records of every image of every segment of agent `number`.
fn back_up(storage: &SimStorage, number: u64, backups: &mut RecordArchive) {
    let folder = agent_folder(number);
    storage.visit_whole_images(&folder, |path, bytes| {
        if path.rsplit('/').next().and_then(parse_segment_name).is_some() {
            backups.add_segment(bytes, number);
        }
    });
}

fn content(serial: u64, random: &mut Random) -> Vec<u8> {
    canary::content(EXPLORATION_SEED, serial, 200, random)
}

/// Builds the state before the action, durably, and the models before and after it.
fn prepare(protocol: Protocol) -> Result<Scenario, String> {
    let options = exploration_options();
    let storage = SimStorage::without_faults(EXPLORATION_SEED);
    let mut random = Random::seeded(EXPLORATION_SEED);
    let mut store =
        StoreEngine::open(storage.clone(), options.clone()).map_err(|error| failed("opening the store", error))?;
    let encrypted = protocol.is_encrypted();
    let created = if encrypted { store.create_encrypted_agent("explored") } else { store.create_agent("explored") };
    let token = created.map_err(|error| failed("creating the agent", error))?;
    let key = store.authenticate(&token).map_err(|error| failed("authenticating", error))?;
    let number = key.number();
    let mut agent = store.open_agent(key).map_err(|error| failed("opening the agent", error))?;
    let mut model = AgentModel::new(encrypted);
    let mut backups = RecordArchive::default();
    let mut serial = 0;
    let mut add_lot =
        |agent: &mut AgentEngine<SimStorage>, model: &mut AgentModel, random: &mut Random| -> Result<u64, String> {
            serial += 1;
            let text = content(serial, random);
            agent.add_lot("source", &text).map_err(|error| failed("adding a lot", error))?;
            Ok(model.add_lot("source", &text))
        };
    let first = add_lot(&mut agent, &mut model, &mut random)?;
    let second = add_lot(&mut agent, &mut model, &mut random)?;
    let text = content(100, &mut random);
    agent.remember(&text, &[Leg::from([Id::from(first)])]).map_err(|error| failed("remembering", error))?;
    model.remember(&text, &[vec![first]]).map_err(|error| failed("the model remembering", error))?;
    if matches!(protocol, Protocol::SegmentRoll | Protocol::EraseInPlaceAcrossSegments) {
        // Fill the first segment to its limit, so the next write seals it.
        while !sealed_next(&storage, number, &options) {
            add_lot(&mut agent, &mut model, &mut random)?;
        }
    }
    if protocol == Protocol::EraseInPlaceAcrossSegments {
        // A memory in the second segment that dies, and loses its text, with the first lot.
        let text = content(101, &mut random);
        agent.remember(&text, &[Leg::from([Id::from(first)])]).map_err(|error| failed("remembering", error))?;
        model.remember(&text, &[vec![first]]).map_err(|error| failed("the model remembering", error))?;
    }
    back_up(&storage, number, &mut backups);
    if matches!(protocol, Protocol::Compaction | Protocol::EraseByKeysAfterCompaction) {
        agent.recall(Id::from(first), Mode::Fair, Removal::Untrusted).map_err(|error| failed("recalling", error))?;
        model.recall(first, Mode::Fair, Removal::Untrusted).map_err(|error| failed("the model recalling", error))?;
    }
    if protocol == Protocol::EraseByKeysAfterCompaction {
        agent.compact().map_err(|error| failed("compacting", error))?;
        model.compact();
    }
    let mut after = model.clone();
    match protocol {
        Protocol::BatchAppend | Protocol::SegmentRoll => {
            let writes = action_writes(&mut random, first, second);
            after.batch(&writes).map_err(|error| failed("the model's batch", error))?;
        }
        Protocol::EraseInPlace
        | Protocol::EraseInPlaceAcrossSegments
        | Protocol::EraseByKeys
        | Protocol::EraseByKeysAfterCompaction => {
            after.recall(first, Mode::Strict, Removal::Erase).map_err(|error| failed("the model's recall", error))?;
        }
        Protocol::Compaction => after.compact(),
    }
    drop(agent);
    drop(store);
    // Start from a state where everything is durable.
    let keep_all = vec![Fate::Keep; storage.pending_changes().len()];
    storage.crash_with(&keep_all);
    back_up(&storage, number, &mut backups);
    let token = encrypted.then_some(token);
    Ok(Scenario { storage, number, token, before: model, after, options, backups })
}

/// Whether the active segment is full, so the next write starts a new one.
fn sealed_next(storage: &SimStorage, number: u64, options: &Options) -> bool {
    let folder = cheesedb_core::log::names::agent_folder(number);
    let path = cheesedb_core::log::names::segment_path(&folder, 1);
    let written = storage.file_bytes(&path).map_or(0, |bytes| committed_length(&bytes));
    written >= options.segment_size_max_bytes
}

/// The length of a segment up to its last byte that is not a zero of preallocation.
fn committed_length(bytes: &[u8]) -> u64 {
    bytes.iter().rposition(|byte| *byte != 0).map_or(0, |last| last as u64 + 1)
}

/// The batch the append protocols write: a lot, a memory on it and on `first`, and a memory on
/// both lots with a second leg.
fn action_writes(random: &mut Random, first: u64, second: u64) -> Vec<crate::model::ModelWrite> {
    use crate::model::ModelWrite;
    let next = first.max(second) + 2;
    vec![
        ModelWrite::Lot { label: "batch".to_string(), content: content(200, random) },
        ModelWrite::Memory { content: content(201, random), legs: vec![vec![first, next]], reads: vec![] },
        ModelWrite::Memory { content: content(202, random), legs: vec![vec![next], vec![second]], reads: vec![] },
    ]
}

/// Performs the explored action on `agent`; returns whether it was acknowledged.
fn act(protocol: Protocol, agent: &mut AgentEngine<SimStorage>, scenario: &Scenario) -> bool {
    match protocol {
        Protocol::BatchAppend | Protocol::SegmentRoll => {
            let Some(writes) = scenario.after.nodes.get(scenario.before.nodes.len()..) else { return false };
            agent
                .batch(|batch| {
                    for node in writes {
                        match &node.kind {
                            crate::model::ModelKind::Lot { label } => batch.add_lot(label, &node.content)?,
                            crate::model::ModelKind::Memory { legs, .. } => {
                                let legs: Vec<Leg> =
                                    legs.iter().map(|leg| leg.iter().map(|id| Id::from(*id)).collect()).collect();
                                batch.remember(&node.content, &legs)?
                            }
                        };
                    }
                    Ok(())
                })
                .is_ok()
        }
        Protocol::EraseInPlace
        | Protocol::EraseInPlaceAcrossSegments
        | Protocol::EraseByKeys
        | Protocol::EraseByKeysAfterCompaction => agent.recall(Id::from(1), Mode::Strict, Removal::Erase).is_ok(),
        Protocol::Compaction => agent.compact().is_ok(),
    }
}

/// The fates tried for one pending change.
fn fates_of(change: &PendingChange) -> Vec<Fate> {
    match change {
        PendingChange::Write { length, .. } => {
            vec![Fate::Drop, Fate::Keep, Fate::Prefix(length / 2), Fate::Garble(*length)]
        }
        PendingChange::SetLength { .. } | PendingChange::Name { .. } => vec![Fate::Drop, Fate::Keep],
    }
}

/// Every combination of fates (or, past `combinations_max`, that many drawn at random).
fn combinations(pending: &[PendingChange], combinations_max: usize, random: &mut Random) -> Vec<Vec<Fate>> {
    let choices: Vec<Vec<Fate>> = pending.iter().map(fates_of).collect();
    let total = choices.iter().try_fold(1usize, |product, options| product.checked_mul(options.len()));
    match total {
        Some(total) if total <= combinations_max => (0..total)
            .map(|mut index| {
                choices
                    .iter()
                    .map(|options| {
                        let fate = options.get(index % options.len()).copied().unwrap_or(Fate::Drop);
                        index /= options.len().max(1);
                        fate
                    })
                    .collect()
            })
            .collect(),
        _ => (0..combinations_max)
            .map(|_| {
                choices
                    .iter()
                    .map(|options| options.get(random.index(options.len())).copied().unwrap_or(Fate::Drop))
                    .collect()
            })
            .collect(),
    }
}

/// Explores every crash point of `protocol` and, at each, every combination of fates of the
/// unsynced changes (at most `combinations_max` per point).
pub fn explore(protocol: Protocol, combinations_max: usize) -> Result<Exploration, String> {
    let scenario = prepare(protocol)?;
    let mut exploration = Exploration::default();
    // Count the protocol's storage operations once, on a copy.
    let counting = scenario.storage.fork();
    let mut agent = open_agent(&counting, scenario.number, &scenario.options, scenario.token.as_ref())
        .map_err(|error| failed("opening for the count", error))?;
    let start = counting.operation_count();
    if !act(protocol, &mut agent, &scenario) {
        return Err(format!("{protocol:?}: the action fails without a crash"));
    }
    exploration.operations = counting.operation_count() - start;
    drop(agent);
    let mut random = Random::seeded(EXPLORATION_SEED);
    for crash_point in 0..=exploration.operations {
        let disk = scenario.storage.fork();
        let mut agent = open_agent(&disk, scenario.number, &scenario.options, scenario.token.as_ref())
            .map_err(|error| failed("opening before the crash", error))?;
        disk.arm_crash(crash_point);
        let acknowledged = act(protocol, &mut agent, &scenario);
        disk.power_off();
        drop(agent);
        let pending = disk.pending_changes();
        exploration.pending_max = exploration.pending_max.max(pending.len());
        for fates in combinations(&pending, combinations_max, &mut random) {
            let crashed = disk.fork();
            crashed.crash_with(&fates);
            let after = check_crash_state(&scenario, protocol, &crashed, acknowledged).map_err(|message| {
                format!("{protocol:?}, crash after {crash_point} operations, fates {fates:?}: {message}")
            })?;
            exploration.crash_states += 1;
            if after {
                exploration.found_after += 1;
            } else {
                exploration.found_before += 1;
            }
        }
    }
    Ok(exploration)
}

/// Opens a crash state and checks it; returns whether the action was found done.
fn check_crash_state(
    scenario: &Scenario,
    protocol: Protocol,
    disk: &SimStorage,
    acknowledged: bool,
) -> Result<bool, String> {
    let agent = open_agent(disk, scenario.number, &scenario.options, scenario.token.as_ref())
        .map_err(|error| failed("open after the crash", error))?;
    // An Erase of a node dead already changes no shape: its record in the log tells.
    let erase_found = protocol.erases() && erase_recorded(disk, scenario.number, 1);
    let (model, done) = match merge_uncertain(&scenario.before, &scenario.after) {
        // Compaction changes only where text is: once acknowledged it is gone, before that
        // each dead node's text may or may not be.
        Some(_) if acknowledged || erase_found => (scenario.after.clone(), true),
        Some(merged) => (merged, false),
        None if shape_matches(&agent, &scenario.after) => (scenario.after.clone(), true),
        None if !acknowledged && shape_matches(&agent, &scenario.before) => (scenario.before.clone(), false),
        None => {
            return Err(format!(
                "the agent has {} nodes, alive {:?} {:?}; acknowledged: {acknowledged}",
                agent.node_count(),
                agent.alive_lots(),
                agent.alive_memories()
            ));
        }
    };
    for id in 1..=model.next_id() {
        match compare_node(&model, id, agent.audit(Id::from(id))) {
            Ok(_) => {}
            Err(Mismatch::Corrupt(error)) => return Err(failed("reading after the crash", error)),
            Err(Mismatch::Violation(message)) => return Err(message),
        }
    }
    agent.verify().map_err(|error| failed("verify after the crash", error))?;
    // Erased text must be gone once the erasure is known (the recall record made it to disk),
    // and an encrypted agent's text is never in a file at all.
    let mut found = std::collections::BTreeSet::new();
    disk.visit_images(|_, bytes| canary::find_markers(bytes, EXPLORATION_SEED, &mut found));
    for node in &model.nodes {
        let must_be_gone = node.text == Text::Absent || scenario.token.is_some();
        if must_be_gone && canary::serial_of(&node.content).is_some_and(|serial| found.contains(&serial)) {
            return Err("erased text (or an encrypted agent's text) is in a file".to_string());
        }
    }
    check_keys(scenario, disk, &model).map_err(|message| format!("after the crash: {message}"))?;
    // What open served must survive another crash that drops everything unsynced.
    drop(agent);
    let drops = vec![Fate::Drop; disk.pending_changes().len()];
    disk.crash_with(&drops);
    let again = open_agent(disk, scenario.number, &scenario.options, scenario.token.as_ref())
        .map_err(|error| failed("open after a second crash", error))?;
    if !shape_matches(&again, &model) {
        return Err("a second crash changed what the first recovery served".to_string());
    }
    check_keys(scenario, disk, &model).map_err(|message| format!("after a second crash: {message}"))?;
    Ok(done)
}

/// Whether the log of agent `number` holds a recall with Erase of `id`.
fn erase_recorded(disk: &SimStorage, number: u64, id: u64) -> bool {
    let folder = agent_folder(number);
    let mut found = false;
    disk.visit_whole_images(&folder, |path, bytes| {
        if path.rsplit('/').next().and_then(parse_segment_name).is_none() {
            return;
        }
        let mut position = SEGMENT_HEADER_BYTES;
        while let Some(Ok((decoded, length))) = bytes.get(position..).map(record::decode) {
            found |= decoded.erases(id);
            position += length;
        }
    });
    found
}

/// On an encrypted agent: with the keys its token and its key files yield (as a program reads
/// them and as the medium holds them), no record of an erased node opens, in the segments or
/// in the backups taken before; the slot of every node whose text is there opens it to its
/// content (in the files as a program reads them); nothing is in the clear.
fn check_keys(scenario: &Scenario, disk: &SimStorage, model: &AgentModel) -> Result<(), String> {
    let Some(token) = scenario.token.as_ref() else { return Ok(()) };
    let folder = agent_folder(scenario.number);
    let mut current = Vec::new();
    let mut in_the_clear = None;
    disk.visit_whole_images(&folder, |path, bytes| {
        if path.rsplit('/').next().and_then(parse_segment_name).is_some() {
            let walk = walk_segment(bytes, scenario.number);
            current.extend(walk.records);
            in_the_clear = in_the_clear.take().or(walk.in_the_clear);
        }
    });
    if let Some(what) = in_the_clear {
        return Err(what);
    }
    let erased: BTreeSet<u64> = model.ids().filter(|id| model.node(*id).is_some_and(|node| node.erased)).collect();
    let present: BTreeMap<u64, Vec<u8>> = model
        .ids()
        .filter_map(|id| {
            model.node(id).filter(|node| node.text == Text::Present).map(|node| (id, node.content.clone()))
        })
        .collect();
    let mut everything = current.clone();
    everything.extend(scenario.backups.records_of(&erased));
    for durable in [false, true] {
        let read = |path: String| {
            if durable { disk.durable_file_bytes(&path) } else { disk.file_bytes(&path) }.unwrap_or_default()
        };
        let ring =
            KeyRing::new(scenario.number, token.as_bytes(), read(key_table_path(&folder)), &read(epochs_path(&folder)));
        let files = if durable { "as the medium holds them" } else { "as a program reads them" };
        if let Some(opened) = first_erased_that_opens(&ring, &everything, &erased) {
            return Err(format!(
                "erased node {} opens ({} record) with {}, from the key files {files}",
                opened.id, opened.record_kind, opened.key_from
            ));
        }
        // The slots open wrote again from records may still be in the cache only: by design.
        if let Some((id, why)) = first_unreadable(&ring, &current, &present).filter(|_| !durable) {
            return Err(format!("node {id} must be readable, but {why} (the key files {files})"));
        }
    }
    Ok(())
}

/// What a corruption sweep found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sweep {
    /// The file swept.
    pub file: String,
    /// Its length.
    pub bytes: u64,
    /// Damaged copies opened.
    pub damaged_copies: u64,
    /// Those reported as corrupt by open or verify.
    pub detected: u64,
    /// The first few that were not: offset and the bits flipped.
    pub missed: Vec<(u64, u8)>,
}

/// A store whose agent has a sealed first segment holding every kind of record (lots,
/// memories, a recall, an erased record, commit markers, the seal), closed durably.
fn sealed_fixture() -> Result<(SimStorage, u64, Options), String> {
    let options = Options::default().segment_size_max_bytes(4096);
    let storage = SimStorage::without_faults(EXPLORATION_SEED);
    let mut random = Random::seeded(EXPLORATION_SEED);
    let mut store =
        StoreEngine::open(storage.clone(), options.clone()).map_err(|error| failed("opening the store", error))?;
    let token = store.create_agent("swept").map_err(|error| failed("creating the agent", error))?;
    let key = store.authenticate(&token).map_err(|error| failed("authenticating", error))?;
    let number = key.number();
    let mut agent = store.open_agent(key).map_err(|error| failed("opening the agent", error))?;
    let lot = agent.add_lot("source", &content(1, &mut random)).map_err(|error| failed("adding a lot", error))?;
    let other = agent.add_lot("other", &content(2, &mut random)).map_err(|error| failed("adding a lot", error))?;
    agent
        .remember(&content(3, &mut random), &[Leg::from([lot]), Leg::from([other])])
        .map_err(|error| failed("remembering", error))?;
    let doomed = agent.add_lot("doomed", &content(4, &mut random)).map_err(|error| failed("adding a lot", error))?;
    agent.recall(doomed, Mode::Strict, Removal::Erase).map_err(|error| failed("erasing", error))?;
    let mut serial = 10;
    while !storage.name_exists(&segment_path(&agent_folder(number), 2)) {
        serial += 1;
        agent.add_lot("fill", &content(serial, &mut random)).map_err(|error| failed("filling", error))?;
    }
    drop(agent);
    drop(store);
    let keep_all = vec![Fate::Keep; storage.pending_changes().len()];
    storage.crash_with(&keep_all);
    Ok((storage, number, options))
}

/// Flips, one at a time, every byte of `path` (all bits, then one bit) in copies of the fixture
/// and checks that opening the store and agent, or verifying it, reports corruption.
fn sweep(storage: &SimStorage, number: u64, options: &Options, path: &str) -> Result<Sweep, String> {
    let original = storage.file_bytes(path).ok_or_else(|| format!("{path} is missing"))?;
    let mut sweep = Sweep { file: path.to_string(), bytes: original.len() as u64, ..Sweep::default() };
    for offset in 0..original.len() {
        for mask in [0xffu8, 1 << (offset % 8)] {
            let mut damaged = original.clone();
            if let Some(byte) = damaged.get_mut(offset) {
                *byte ^= mask;
            }
            let copy = storage.fork();
            copy.replace_file_bytes(path, &damaged);
            sweep.damaged_copies += 1;
            let outcome = open_agent(&copy, number, options, None).and_then(|agent| agent.verify().map(|_| ()));
            match outcome {
                Err(error) if error.is_corruption() => sweep.detected += 1,
                _ => {
                    if sweep.missed.len() < 16 {
                        sweep.missed.push((offset as u64, mask));
                    }
                }
            }
        }
    }
    Ok(sweep)
}

/// Every single-byte corruption of a sealed segment.
pub fn sweep_sealed_segment() -> Result<Sweep, String> {
    let (storage, number, options) = sealed_fixture()?;
    let folder = cheesedb_core::log::names::agent_folder(number);
    sweep(&storage, number, &options, &cheesedb_core::log::names::segment_path(&folder, 1))
}

/// Every single-byte corruption of the catalog.
pub fn sweep_catalog() -> Result<Sweep, String> {
    let (storage, number, options) = sealed_fixture()?;
    sweep(&storage, number, &options, cheesedb_core::log::names::CATALOG_FILE)
}
