//! Encrypted agents in the workload: which agents are encrypted, how the harness opens them (with
//! their token, the only way in), the copies of their segments it keeps before each Erase and
//! compaction, and the key check run with [`crate::key_oracle`] after every Erase and every
//! reopen:
//!
//! - no record of a node an Erase covered opens with any key the token and the current key files
//!   yield, in the segments now or in any copy kept from before;
//! - every node whose text the model says is there opens, with those keys, to its content (so no
//!   key was destroyed while the Erase that would have destroyed it is reported failed);
//! - every record with content is sealed, and no sealed lot keeps its label in the clear.
//!
//! Plaintext of an encrypted agent in any file is the byte search's business (`checks.rs`).

use std::collections::{BTreeMap, BTreeSet};

use cheesedb_core::log::names::{agent_folder, epochs_path, key_table_path, parse_segment_name, TEMPORARY_SUFFIX};
use cheesedb_core::{AgentEngine, Error, StorageOperation, StoreEngine, Token};

use super::world::{Step, Stop, World};
use crate::key_oracle::{
    first_erased_that_opens, first_shared_secret, first_unreadable, walk_segment, KeyRing, SealedRecord,
};
use crate::model::{AgentModel, Text};
use crate::storage::{FaultKind, SimStorage};

/// The words of every violation that finds an erased node readable: never excused by a silent
/// fault, which may cost data but must never bring back what an Erase destroyed.
pub(crate) const ERASED_NODE_OPENS: &str = "must be unreadable";

/// The words of every violation that finds an encrypted agent's content or label in the clear:
/// never excused by a silent fault either, since the engine never writes them.
pub(crate) const IN_THE_CLEAR: &str = "in the clear";

/// Whether the `serial`-th agent a seed creates (from 1) is encrypted: about half of them, by a
/// hash of the seed and the serial rather than a draw, so that the seed's draws stay as they were.
pub(crate) fn encrypted_agent(seed: u64, serial: u64) -> bool {
    let mut mixed = seed ^ serial.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (mixed ^ (mixed >> 31)) & 1 == 1
}

/// Opens agent `number` as its owner would: an encrypted one with its token, the only way in
/// (a token of another agent is refused as unknown), a plaintext one by its number.
pub(crate) fn open_agent_engine(
    store: &StoreEngine<SimStorage>,
    number: u64,
    token: Option<&Token>,
) -> Result<AgentEngine<SimStorage>, Error> {
    match token {
        Some(token) if store.is_encrypted(number) => {
            let key = store.authenticate(token)?;
            if key.number() != number {
                return Err(Error::UnknownToken);
            }
            store.open_agent(key)
        }
        _ => store.open_agent_by_number(number),
    }
}

/// Whether `path` is one of the segments (or a rewrite of one in progress) in `folder`.
fn is_segment_in(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .and_then(|rest| rest.strip_prefix('/'))
        .map(|name| name.strip_suffix(TEMPORARY_SUFFIX).unwrap_or(name))
        .is_some_and(|name| parse_segment_name(name).is_some())
}

/// The sealed records of every image (durable and cached) of every segment of agent `number`,
/// and the first sign of content in the clear.
fn current_records(storage: &SimStorage, number: u64) -> (Vec<SealedRecord>, Option<String>) {
    let folder = agent_folder(number);
    let mut records = Vec::new();
    let mut in_the_clear = None;
    storage.visit_whole_images(&folder, |path, bytes| {
        if is_segment_in(path, &folder) {
            let walk = walk_segment(bytes, number);
            records.extend(walk.records);
            if in_the_clear.is_none() {
                in_the_clear = walk.in_the_clear.map(|what| format!("{path}: {what}"));
            }
        }
    });
    records.sort();
    records.dedup();
    (records, in_the_clear)
}

/// The keys of agent `number` from its key files as a program reads them, and (with `medium`,
/// where they differ) as the medium holds them.
fn key_rings(storage: &SimStorage, number: u64, token: &Token, medium: bool) -> (KeyRing, Option<KeyRing>) {
    let folder = agent_folder(number);
    let key_files = |read: &dyn Fn(&str) -> Option<Vec<u8>>| {
        (read(&key_table_path(&folder)).unwrap_or_default(), read(&epochs_path(&folder)).unwrap_or_default())
    };
    let cached = key_files(&|path| storage.file_bytes(path));
    let durable = key_files(&|path| storage.durable_file_bytes(path));
    let medium_ring =
        (medium && durable != cached).then(|| KeyRing::new(number, token.as_bytes(), durable.0, &durable.1));
    (KeyRing::new(number, token.as_bytes(), cached.0, &cached.1), medium_ring)
}

/// The nodes an Erase the model knows happened covered.
fn erased_nodes(model: &AgentModel) -> BTreeSet<u64> {
    model.ids().filter(|id| model.node(*id).is_some_and(|node| node.erased)).collect()
}

/// The content of every node whose text the model says is in the files.
fn readable_contents(model: &AgentModel) -> BTreeMap<u64, Vec<u8>> {
    model
        .ids()
        .filter_map(|id| {
            model.node(id).filter(|node| node.text == Text::Present).map(|node| (id, node.content.clone()))
        })
        .collect()
}

impl World {
    /// Keeps the sealed records of every segment image of encrypted agent `index`: a copy of its
    /// segments taken before an Erase or a compaction, as a backup would be.
    pub(crate) fn archive_segments(&mut self, index: usize) -> Step {
        let storage = self.storage.clone();
        let slot = self.slot(index)?;
        if !slot.encrypted {
            return Ok(());
        }
        let folder = agent_folder(slot.number);
        storage.visit_whole_images(&folder, |path, bytes| {
            if is_segment_in(path, &folder) {
                slot.archive.add_segment(bytes, slot.number);
            }
        });
        Ok(())
    }

    /// The key check of encrypted agent `index` (see the module's comment), with the key files
    /// as a program reads them and as the medium holds them: an Erase syncs what it destroys,
    /// and open makes durable what it serves (unless a lost write, which the engine cannot see,
    /// may have kept an old sector on the medium). After a reopen (`readable`), also that every
    /// node whose text the model says is there opens to its content. Reads the files from
    /// outside: no storage operation, no fault.
    pub(crate) fn check_keys(&mut self, index: usize, during: &str, readable: bool) -> Step {
        let storage = self.storage.clone();
        let lost_writes = storage.fault_counts().count(FaultKind::LostWrite) > 0;
        let slot = self.slot(index)?;
        let Some(token) = slot.token.as_ref().filter(|_| slot.encrypted) else { return Ok(()) };
        let (number, name) = (slot.number, slot.name.clone());
        let (ring, medium_ring) = key_rings(&storage, number, token, !lost_writes);
        let (mut records, in_the_clear) = current_records(&storage, number);
        let erased = erased_nodes(&slot.model);
        records.extend(slot.archive.records_of(&erased));
        let opened = first_erased_that_opens(&ring, &records, &erased)
            .map(|opened| (opened, "as a program reads them"))
            .or_else(|| {
                let medium_ring = medium_ring.as_ref()?;
                first_erased_that_opens(medium_ring, &records, &erased)
                    .map(|opened| (opened, "as the medium holds them"))
            });
        let unreadable = readable.then(|| first_unreadable(&ring, &records, &readable_contents(&slot.model))).flatten();
        let shared = readable.then(|| first_shared_secret(&ring, slot.model.ids())).flatten();
        self.stats.key_checks += 1;
        if let Some((opened, files)) = opened {
            let message = format!(
                "{during}: node {} of {name} was erased and {ERASED_NODE_OPENS}, but a {} record of it opens with {}, from the key files {files} ({} live epoch keys)",
                opened.id, opened.record_kind, opened.key_from, ring.live_epochs()
            );
            return self.erased_key_back(index, message);
        }
        if let Some(what) = in_the_clear {
            return Err(Stop::Violation(format!("{during}: encrypted agent {name}: {what}")));
        }
        if let Some((id, why)) = unreadable {
            return Err(Stop::Violation(format!(
                "{during}: node {id} of {name} must be readable with the token, but {why}"
            )));
        }
        if let Some((first, second)) = shared {
            return Err(Stop::Violation(format!(
                "{during}: nodes {first} and {second} of {name} have the same secret in their key table slots"
            )));
        }
        Ok(())
    }

    /// Whether `error` is the failure to write the key table slots of a write's new nodes,
    /// which comes before any of its records: then the write is refused with `Io` and nothing
    /// of it is stored; the engine need not be poisoned, since a torn slot past the last node
    /// is written again by the write that next takes its id.
    pub(crate) fn key_slots_failed_before_writing(&mut self, agent: usize, error: &Error) -> Result<bool, Stop> {
        let Error::Io { operation: StorageOperation::Writing, path, .. } = error else { return Ok(false) };
        if !path.ends_with("/keys") {
            return Ok(false);
        }
        let (engine, _) = self.engine(agent)?;
        if engine.is_poisoned() {
            return Ok(false);
        }
        self.stats.failures_reported += 1;
        Ok(true)
    }

    /// A key that opens an erased node is in the files. A lost write (a zeroed slot or epoch key
    /// the medium never took) is beyond what the engine sees while it runs; after an open, its
    /// verify must then report the damage. Anything else is a violation.
    fn erased_key_back(&mut self, index: usize, message: String) -> Step {
        if self.storage.fault_counts().count(FaultKind::LostWrite) > 0 {
            let storage = self.storage.clone();
            let verified = self.slot(index)?.engine.as_ref().map(|engine| {
                storage.suspend_faults(true);
                let verified = engine.verify();
                storage.suspend_faults(false);
                verified
            });
            if let Some(Err(error)) = verified.filter(|verified| verified.as_ref().is_err_and(Error::is_corruption)) {
                return self.corruption(&error, &format!("verify after a lost write: {message}"));
            }
        }
        Err(Stop::Violation(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_half_of_the_agents_are_encrypted_and_the_choice_is_fixed() {
        let encrypted = (0..1000).filter(|seed| encrypted_agent(*seed, 1 + seed % 3)).count();
        assert!((400..600).contains(&encrypted), "{encrypted}");
        assert_eq!(encrypted_agent(5, 2), encrypted_agent(5, 2));
    }

    #[test]
    fn segments_and_their_rewrites_are_told_from_other_files() {
        let folder = agent_folder(3);
        let segment = cheesedb_core::log::names::segment_path(&folder, 2);
        assert!(is_segment_in(&segment, &folder));
        assert!(is_segment_in(&format!("{segment}{TEMPORARY_SUFFIX}"), &folder));
        assert!(!is_segment_in(&key_table_path(&folder), &folder));
        assert!(!is_segment_in(&segment, &agent_folder(4)));
    }
}
