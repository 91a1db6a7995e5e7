//! The segment files an agent holds open: the active one always, sealed ones only while they
//! are among the few used last.
//!
//! An agent may have up to 65,535 segments, far more than the descriptors a process usually
//! may hold (1,024 is a common limit), so sealed segments are opened when read and kept in a
//! small cache of fixed capacity. An agent therefore never holds more than one active file,
//! [`SEALED_FILES_OPEN_MAX`] sealed ones, and the one file an operation may open for itself.
//!
//! Sealed segments are never written, except by an erasure in place and by compaction; both sync
//! through the handle they wrote with before it goes back to the cache, so dropping a cached
//! handle later never drops a write that is not durable.

use alloc::vec::Vec;
use core::cell::RefCell;

use super::{io_error, AgentEngine};
use crate::error::Error;
use crate::error_facts::{InternalRule, StorageOperation};
use crate::limits::SEALED_FILES_OPEN_MAX;
use crate::storage::Storage;

/// The open files of one agent's segments.
pub(super) struct SegmentFiles<F> {
    /// How many segments the agent has; the last one is the active segment.
    count: u64,
    /// The active segment's file, absent until create or open has reached it.
    active: Option<F>,
    /// Recently used sealed segments and their files, the least recently used first.
    sealed: RefCell<Vec<(u64, F)>>,
}

impl<F> Default for SegmentFiles<F> {
    fn default() -> SegmentFiles<F> {
        SegmentFiles { count: 0, active: None, sealed: RefCell::new(Vec::new()) }
    }
}

impl<F> SegmentFiles<F> {
    /// How many segments the agent has.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// How many files are open now: the active one and the cached sealed ones.
    pub(super) fn open_count(&self) -> usize {
        let sealed = self.sealed.try_borrow().map_or(0, |sealed| sealed.len());
        sealed + usize::from(self.active.is_some())
    }

    /// The active segment's file.
    pub(super) fn active_mut(&mut self) -> Option<&mut F> {
        self.active.as_mut()
    }

    /// Makes `file` the active segment, number `number`, closing the previous active file. That
    /// one is sealed now, and is opened again only if read: a file that wrote may keep resources
    /// of its backend (an io_uring ring) that a file opened to read does not need.
    pub(super) fn start(&mut self, number: u64, file: F) {
        self.active = Some(file);
        self.count = number;
    }

    /// Counts one more sealed segment that open has replayed, without keeping its file.
    pub(super) fn count_sealed(&mut self, number: u64) {
        self.count = number;
    }

    /// Puts a sealed segment's file in the cache (replacing any file held for the same
    /// segment), closing the least recently used one if the cache is full.
    fn keep_sealed(&self, segment: u64, file: F) {
        let Ok(mut sealed) = self.sealed.try_borrow_mut() else { return };
        sealed.retain(|(held, _)| *held != segment);
        if sealed.len() >= SEALED_FILES_OPEN_MAX {
            sealed.remove(0);
        }
        sealed.push((segment, file));
    }

    /// Takes the cached file of `segment` out of the cache, if it is there.
    fn take_sealed(&self, segment: u64) -> Option<F> {
        let mut sealed = self.sealed.try_borrow_mut().ok()?;
        let index = sealed.iter().position(|(held, _)| *held == segment)?;
        Some(sealed.remove(index).1)
    }

    /// Closes the cached file of `segment`: the file was replaced under its name.
    pub(super) fn forget_sealed(&mut self, segment: u64) {
        self.sealed.get_mut().retain(|(held, _)| *held != segment);
    }
}

impl<S: Storage> AgentEngine<S> {
    /// Runs `read` on the file of `segment`, whose path is `path`: the active file, a cached
    /// sealed one, or a sealed one opened now and cached afterwards.
    pub(super) fn with_segment<T>(
        &self,
        segment: u64,
        path: &str,
        read: impl FnOnce(&S::File, &str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if segment == self.segments.count() {
            let file = self
                .segments
                .active
                .as_ref()
                .ok_or(Error::Internal { what: InternalRule::ActiveSegmentOpenWhileInUse })?;
            return read(file, path);
        }
        let file = self.sealed_file(segment, path)?;
        // The file is out of the cache while `read` runs, so a read that needs another segment
        // can never find the cache borrowed.
        let result = read(&file, path);
        self.segments.keep_sealed(segment, file);
        result
    }

    /// Runs `write` on the file of `segment`, as [`AgentEngine::with_segment`] does. `write`
    /// must sync what it writes before it returns.
    pub(super) fn with_segment_mut<T>(
        &mut self,
        segment: u64,
        path: &str,
        write: impl FnOnce(&mut S::File, &str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if segment == self.segments.count() {
            let file = self
                .segments
                .active
                .as_mut()
                .ok_or(Error::Internal { what: InternalRule::ActiveSegmentOpenWhileInUse })?;
            return write(file, path);
        }
        let mut file = self.sealed_file(segment, path)?;
        let result = write(&mut file, path);
        // A handle whose write or sync failed is closed, never used again.
        if result.is_ok() {
            self.segments.keep_sealed(segment, file);
        }
        result
    }

    /// The file of sealed segment `segment`, from the cache or opened now.
    fn sealed_file(&self, segment: u64, path: &str) -> Result<S::File, Error> {
        if !(1..self.segments.count()).contains(&segment) {
            return Err(Error::Internal { what: InternalRule::SealedSegmentNumberKnown });
        }
        match self.segments.take_sealed(segment) {
            Some(file) => Ok(file),
            None => {
                self.storage.open_file(path, false).map_err(|error| io_error(StorageOperation::Opening, path, error))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::vec::Vec;

    use crate::id::{Id, Mode, Removal};
    use crate::limits::{Options, SEALED_FILES_OPEN_MAX};
    use crate::ram_storage::RamStorage;
    use crate::store::StoreEngine;

    fn content(index: usize) -> Vec<u8> {
        format!("lot {index:04}, padded so that a few dozen of them fill a small segment").into_bytes()
    }

    #[test]
    fn an_agent_holds_few_files_however_many_segments_it_reads_and_writes() {
        let options = Options::default().segment_size_max_bytes(4096).preallocate_bytes(0);
        let mut store = StoreEngine::open(RamStorage::default(), options).unwrap();
        let token = store.create_agent("alice").unwrap();
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        let mut ids: Vec<Id> = Vec::new();
        while alice.report().segments < 40 {
            ids.push(alice.add_lot("tool", &content(ids.len())).unwrap());
            assert_eq!(alice.open_segment_files(), 1, "only the active file while writing");
        }
        drop(alice);
        let mut alice = store.open_agent(store.authenticate(&token).unwrap()).unwrap();
        assert_eq!(alice.open_segment_files(), 1, "open keeps no sealed file");
        for (index, id) in ids.iter().enumerate() {
            assert_eq!(alice.get(*id).unwrap().content(), Some(&content(index)[..]));
            assert!(alice.open_segment_files() <= 1 + SEALED_FILES_OPEN_MAX);
        }
        assert_eq!(alice.open_segment_files(), 1 + SEALED_FILES_OPEN_MAX);
        // The oldest segments were closed long ago: erase and compact there, through files
        // opened again.
        alice.recall(ids[1], Mode::Fair, Removal::Erase).unwrap();
        alice.recall(ids[2], Mode::Fair, Removal::Untrusted).unwrap();
        alice.compact().unwrap();
        assert_eq!(alice.get(ids[0]).unwrap().content(), Some(&content(0)[..]));
        assert_eq!(alice.get(ids[3]).unwrap().content(), Some(&content(3)[..]));
        assert_eq!(alice.verify(), Ok(alice.head()));
        assert!(alice.open_segment_files() <= 1 + SEALED_FILES_OPEN_MAX);
    }
}
