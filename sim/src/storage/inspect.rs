//! Looking at the disk from outside, without an operation: counters, files, names and images.

use super::disk::{Entry, FileChange};
use super::faults::FaultCounts;
use super::SimStorage;

impl SimStorage {
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

    /// File syncs that succeeded so far.
    pub fn file_syncs(&self) -> u64 {
        self.shared.borrow().file_syncs
    }

    /// The bytes of the file at `path` as a program sees them.
    pub fn file_bytes(&self, path: &str) -> Option<Vec<u8>> {
        let simulation = self.shared.borrow();
        match simulation.disk.lookup(path)? {
            Entry::File(inode) => Some(simulation.disk.volatile(inode).to_vec()),
            Entry::Folder => None,
        }
    }

    /// The bytes of the file at `path` as the medium holds them: what a crash now would leave
    /// (the name looked up as a program sees it).
    pub fn durable_file_bytes(&self, path: &str) -> Option<Vec<u8>> {
        let simulation = self.shared.borrow();
        match simulation.disk.lookup(path)? {
            Entry::File(inode) => simulation.disk.inodes.get(inode).map(|file| file.durable.clone()),
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

    /// Whether a file or folder is named `path` now. Unlike [`Storage::exists`] this is no
    /// operation of the disk: it costs no time, meets no fault and leaves the trace alone.
    pub fn name_exists(&self, path: &str) -> bool {
        self.shared.borrow().disk.lookup(path).is_some()
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

    /// Calls `visit` with the durable image and then the cached image (when it differs) of every
    /// file reachable by a name whose path starts with `prefix`: whole files, as a copy of the
    /// disk taken before or after a crash would hold them.
    pub fn visit_whole_images(&self, prefix: &str, mut visit: impl FnMut(&str, &[u8])) {
        let simulation = self.shared.borrow();
        for (path, inode) in simulation.disk.reachable_files() {
            if !path.starts_with(prefix) {
                continue;
            }
            if let Some(file) = simulation.disk.inodes.get(inode) {
                visit(&path, &file.durable);
                if file.volatile != file.durable {
                    visit(&path, &file.volatile);
                }
            }
        }
    }

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
