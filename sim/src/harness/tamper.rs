//! Hands on the files while the store is closed: an operator who copies a segment over another
//! (of the same agent, or of another one), deletes the newest one or cuts it to its header, and
//! an attacker who forges a flag into a snapshot and recomputes its checksums. The first must
//! make the open refuse the agent as `Corrupt` and modify nothing; the second must be ignored,
//! so no live text is erased on its word.

use cheesedb_core::codec::segment_header::{write_margin_bytes, SEGMENT_HEADER_BYTES};
use cheesedb_core::codec::snapshot_file::SnapshotFile;
use cheesedb_core::log::names::{agent_folder, segment_path, snapshot_path};
use cheesedb_core::{Error, Storage, StorageFile, StoreEngine};

use super::sealed::open_agent_engine;
use super::world::{Step, Stop, World};
use crate::model::Text;

/// Where the flags of a snapshot's node slot start (docs/FORMAT.md, the snapshot body).
const SLOT_FLAGS_SHIFT: u32 = 48;
/// Slot flags: alive, covered by an Erase, text still in the files.
const SLOT_ALIVE: u64 = 2 << SLOT_FLAGS_SHIFT;
const SLOT_ERASE: u64 = 4 << SLOT_FLAGS_SHIFT;
const SLOT_CONTENT_ON_DISK: u64 = 8 << SLOT_FLAGS_SHIFT;

impl World {
    /// Turns faults off, then closes everything after a clean reopen, so no repair is pending;
    /// the caller turns faults on again. With faults on, a bit flip at rest could land during
    /// that reopen after it had read the file, and the open of the tampered store, which must
    /// change nothing, would find it and mend it.
    fn close_for_tampering(&mut self) -> Step {
        self.storage.suspend_faults(true);
        self.reopen(false)?;
        self.store = None;
        for slot in &mut self.agents {
            slot.engine = None;
        }
        Ok(())
    }

    /// The number of segments agent `number` has.
    fn segment_count(&self, number: u64) -> u64 {
        let mut count = 0;
        while self.storage.name_exists(&segment_path(&agent_folder(number), count + 1)) {
            count += 1;
        }
        count
    }

    /// Replaces the newest segment of agent `index` with a copy of another segment (its own
    /// first one, or another agent's newest), opens it, and requires `Corrupt` with every file
    /// unchanged; then puts the segment back and reopens.
    pub(crate) fn tamper_segments(&mut self, index: usize) -> Step {
        let result = self.close_for_tampering().and_then(|()| self.tamper_segments_closed(index));
        self.storage.suspend_faults(false);
        result?;
        self.reopen(false)
    }

    fn tamper_segments_closed(&mut self, index: usize) -> Step {
        let number = self.slot(index)?.number;
        let count = self.segment_count(number);
        match self.random.below(10) {
            0..=2 => return self.delete_newest_segment(number, count),
            3..=4 => return self.cut_newest_segment_to_its_header(number, count),
            _ => {}
        }
        let others: Vec<u64> = self.agents.iter().map(|slot| slot.number).filter(|other| *other != number).collect();
        let source = if count >= 2 && (others.is_empty() || self.random.chance(0.5)) {
            segment_path(&agent_folder(number), 1)
        } else if let Some(other) = others.get(self.random.index(others.len().max(1))).copied() {
            segment_path(&agent_folder(other), self.segment_count(other).max(1))
        } else {
            return Ok(());
        };
        let target = segment_path(&agent_folder(number), count);
        let (Some(original), Some(copy)) = (self.storage.file_bytes(&target), self.storage.file_bytes(&source)) else {
            return Ok(());
        };
        self.storage.note("tamper", &target, count);
        self.storage.replace_file_bytes(&target, &copy);
        let opened = self.open_noting_changes(number);
        self.storage.replace_file_bytes(&target, &original);
        refused_unchanged(opened, &format!("{target}, a copy of {source}"))
    }

    /// Deletes the newest segment of agent `number` (of `count`): a seal before it, or the
    /// numbering from 1, proves it existed, so the open must answer `Corrupt` and change nothing.
    /// The segment is then made again as it was, durably.
    fn delete_newest_segment(&mut self, number: u64, count: u64) -> Step {
        let folder = agent_folder(number);
        let target = segment_path(&folder, count);
        let Some(original) = self.storage.file_bytes(&target) else { return Ok(()) };
        self.storage.note("delete-segment", &target, count);
        let removed = self.storage.remove_file(&target).and_then(|()| self.storage.sync_folder(&folder));
        removed.map_err(|error| Stop::Violation(format!("harness error: removing {target}: {error}")))?;
        let opened = self.open_noting_changes(number);
        let restored = self.storage.open_file(&target, true).and_then(|mut file| {
            file.write_at(0, &original)?;
            file.sync()
        });
        restored
            .and_then(|()| self.storage.sync_folder(&folder))
            .map_err(|error| Stop::Violation(format!("harness error: restoring {target}: {error}")))?;
        refused_unchanged(opened, &format!("the store without {target}"))
    }

    /// Cuts the newest segment of agent `number` (of `count`) down to its header, when the
    /// header promises a write margin: the file is then shorter than any state a crash leaves,
    /// so the open must answer `Corrupt` and change nothing. The segment is then put back.
    fn cut_newest_segment_to_its_header(&mut self, number: u64, count: u64) -> Step {
        let target = segment_path(&agent_folder(number), count);
        let Some(original) = self.storage.file_bytes(&target) else { return Ok(()) };
        let Some(header) = original.get(..SEGMENT_HEADER_BYTES) else { return Ok(()) };
        if write_margin_bytes(header) == 0 {
            return Ok(());
        }
        self.storage.note("cut-segment", &target, count);
        self.storage.replace_file_bytes(&target, header);
        let opened = self.open_noting_changes(number);
        self.storage.replace_file_bytes(&target, &original);
        refused_unchanged(opened, &format!("{target} cut to its header"))
    }

    /// Opens agent `number` again; returns what the open answered and whether it changed any
    /// file.
    fn open_noting_changes(&self, number: u64) -> (Result<(), Error>, bool) {
        let before = self.all_files();
        let token = self.agents.iter().find(|slot| slot.number == number).and_then(|slot| slot.token.as_ref());
        let opened = StoreEngine::open(self.storage.clone(), self.options.clone())
            .and_then(|store| open_agent_engine(&store, number, token).map(|_| ()));
        (opened, self.all_files() != before)
    }

    /// Every file and its bytes, sorted by path (the lock aside, which any open takes).
    fn all_files(&self) -> Vec<(String, Option<Vec<u8>>)> {
        let mut files: Vec<(String, Option<Vec<u8>>)> = self
            .storage
            .file_paths()
            .into_iter()
            .filter(|path| !path.ends_with("lock"))
            .map(|path| {
                let bytes = self.storage.file_bytes(&path);
                (path, bytes)
            })
            .collect();
        files.sort();
        files
    }

    /// Saves a snapshot of agent `index`, forges the Erase flag of a live node whose text is on
    /// disk into it (checksums recomputed), and reopens: the full check then requires the text.
    pub(crate) fn forge_snapshot(&mut self, index: usize) -> Step {
        self.reopen(false)?;
        self.storage.suspend_faults(true);
        let result = self.forge_snapshot_with_faults_off(index);
        self.storage.suspend_faults(false);
        result?;
        self.reopen(false)
    }

    fn forge_snapshot_with_faults_off(&mut self, index: usize) -> Step {
        let slot = self.slot(index)?;
        let number = slot.number;
        let readable: Vec<u64> = slot
            .model
            .ids()
            .filter(|id| slot.model.node(*id).is_some_and(|node| node.alive && node.text == Text::Present))
            .collect();
        let Some(engine) = slot.engine.as_mut() else { return Ok(()) };
        if readable.is_empty() || engine.snapshot().is_err() {
            return Ok(());
        }
        self.store = None;
        for slot in &mut self.agents {
            slot.engine = None;
        }
        let path = snapshot_path(&agent_folder(number));
        let Some(mut snapshot) = self.storage.file_bytes(&path).and_then(|bytes| SnapshotFile::decode(&bytes).ok())
        else {
            return Ok(());
        };
        let chosen = readable.get(self.random.index(readable.len())).copied().unwrap_or(1);
        let Some(slot) = snapshot.slots.get_mut(chosen as usize - 1) else { return Ok(()) };
        let wanted = SLOT_ALIVE | SLOT_CONTENT_ON_DISK;
        if *slot & wanted != wanted || *slot & SLOT_ERASE != 0 {
            return Ok(());
        }
        *slot |= SLOT_ERASE;
        let parts = snapshot.graph_parts();
        self.storage.note("forge-snapshot", &path, chosen);
        self.storage.replace_file_bytes(&path, &SnapshotFile::encode(&snapshot.point, parts, &snapshot.shared));
        Ok(())
    }
}

/// The verdict on an open of a tampered store (`tampered` says how): it must answer `Corrupt` and
/// change no file.
fn refused_unchanged((opened, changed): (Result<(), Error>, bool), tampered: &str) -> Step {
    match opened {
        Err(Error::Corrupt { .. }) if !changed => Ok(()),
        Err(Error::Corrupt { .. }) => Err(Stop::Violation(format!("open refused {tampered}, but modified the files"))),
        other => Err(Stop::Violation(format!("open of {tampered} answered {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Random;
    use crate::storage::{FaultPlan, SimStorage};

    /// Campaign input: a bit flip landed in an erased epoch's slot during the reopen before the
    /// tampering, after that reopen had read the file; the open of the tampered store destroyed
    /// the slot again, a write before its refusal.
    #[test]
    fn no_fault_lands_in_the_reopen_before_the_tampering() {
        let mut random = Random::seeded(7);
        let storage = SimStorage::new(FaultPlan::none(), random.fork());
        let mut world = World::new(7, random, storage);
        world.start().unwrap();
        world.add_lot(0).unwrap();
        let mut flips = FaultPlan::none();
        flips.bit_flip = 1.0;
        world.storage.set_plan(flips);
        let before = world.storage.fault_counts().total();
        world.close_for_tampering().unwrap();
        assert_eq!(world.storage.fault_counts().total(), before);
    }
}
