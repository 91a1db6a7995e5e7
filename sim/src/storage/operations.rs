//! The operations of the disk: what the engine's storage traits do, each counted, timed, exposed
//! to the seed's faults and recorded in the trace.

use cheesedb_core::{Storage, StorageFile};

use super::disk::{self, Entry, NameChange, SECTOR_BYTES};
use super::{Cost, FaultKind, Power, SimError, SimFile, SimStorage, Simulation, LOST_OVERWRITE_FACTOR};
use crate::trace::Event;

impl Simulation {
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
        if self.armed_sync_fails() {
            // Nothing of what it was asked to make durable reaches the medium; all stays pending.
            self.faults.add(FaultKind::SyncFailed);
            return Err(SimError::Injected(FaultKind::SyncFailed));
        }
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

    /// Whether the sync under way is the one an armed sync failure fails (counting it down).
    fn armed_sync_fails(&mut self) -> bool {
        match self.sync_failure {
            Some(0) => {
                self.sync_failure = None;
                true
            }
            Some(left) => {
                self.sync_failure = Some(left - 1);
                false
            }
            None => false,
        }
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
