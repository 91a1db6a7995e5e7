//! [`UringStorage`]: the rings that carry a store's file data and syncs through io_uring.
//!
//! It holds no folder and makes no names: the `cheesedb` crate opens every file and folder
//! itself (never following a link inside the store) and hands the open descriptors here.
//! [`UringStorage::adopt_file`] turns an open file into a [`UringFile`], whose data and syncs
//! go through a ring; [`UringStorage::sync_folder`] makes a folder's names durable with one
//! `fsync` through a ring.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::file::UringFile;
use crate::pool::RingPool;
use crate::probe::{probe, Unavailable};
use crate::ring::{Operation, Target};

/// The io_uring side of a store: rings and counters. Clones share them.
#[derive(Debug, Clone)]
pub struct UringStorage {
    pool: Arc<RingPool>,
}

impl UringStorage {
    /// Rings for a store. Fails, saying why, where this process cannot use io_uring (no kernel
    /// support, switched off, forbidden by a seccomp filter).
    ///
    /// # Errors
    ///
    /// [`Unavailable`], saying why, when the kernel refuses io_uring or lacks an operation the
    /// backend needs.
    pub fn new() -> Result<UringStorage, Unavailable> {
        let pool = Arc::new(RingPool::default());
        let first = probe(pool.counters())?;
        pool.give_back(first);
        Ok(UringStorage { pool })
    }

    /// How many `io_uring_enter` calls handed operations to the kernel so far, over every clone
    /// and file of this storage. A durable write of any size costs one.
    #[must_use]
    pub fn submissions(&self) -> u64 {
        self.pool.counters().submissions.load(Ordering::Relaxed)
    }

    /// How many operations (writes, reads, syncs) were handed to the kernel so far.
    #[must_use]
    pub fn operations(&self) -> u64 {
        self.pool.counters().operations.load(Ordering::Relaxed)
    }

    /// Takes over `file`, opened by the caller: from now on its data and syncs go through the
    /// rings of this storage.
    #[must_use]
    pub fn adopt_file(&self, file: File) -> UringFile {
        UringFile::new(file, self.pool.clone())
    }

    /// Makes every create, rename and remove inside `folder` (an open folder) durable, with one
    /// `fsync` through a ring.
    ///
    /// # Errors
    ///
    /// The system's error when no ring can be had, the submission fails, or the `fsync` fails.
    pub fn sync_folder(&self, folder: &File) -> io::Result<()> {
        let mut ring = self.pool.take_ring()?;
        let mut operations = [Operation::SyncAll { target: Target::Plain(folder.as_raw_fd()) }];
        let outcome = ring.run(&mut operations, false);
        self.pool.give_back(ring);
        match outcome?.first() {
            Some(result) if *result < 0 => Err(io::Error::from_raw_os_error(-result)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb_core::StorageFile;

    #[test]
    fn adopted_files_and_folder_syncs_use_the_ring() {
        let folder = tempfile::tempdir().unwrap();
        let storage = UringStorage::new().unwrap();
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(folder.path().join("data"));
        let mut file = storage.adopt_file(opened.unwrap());
        file.write_at(3, b"abc").unwrap();
        file.sync().unwrap();
        let before = storage.submissions();
        storage.sync_folder(&File::open(folder.path()).unwrap()).unwrap();
        assert_eq!(storage.submissions(), before + 1);
        assert_eq!(std::fs::read(folder.path().join("data")).unwrap(), b"\0\0\0abc");
    }

    #[test]
    fn clones_share_the_counters() {
        let folder = tempfile::tempdir().unwrap();
        let storage = UringStorage::new().unwrap();
        let clone = storage.clone();
        clone.sync_folder(&File::open(folder.path()).unwrap()).unwrap();
        assert_eq!(storage.submissions(), 1);
        assert_eq!(storage.operations(), 1);
    }
}
