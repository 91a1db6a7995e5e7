//! [`UringStorage`]: a store folder whose file I/O and syncs go through io_uring.
//!
//! Names (create, list, rename, remove) use the ordinary system calls: io_uring would hand them
//! to a kernel worker thread and gain nothing. File data goes through io_uring (see
//! [`UringFile`]), and so does the folder sync that makes names durable: one `fsync` operation
//! on the opened folder. Folders are made 0700 and files 0600.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use cheesedb_core::Storage;

use crate::file::UringFile;
use crate::probe::{probe, Unavailable};
use crate::ring::{Counters, Operation, Ring, Target};

/// How many idle rings a storage keeps for reuse; more are closed.
const IDLE_RINGS_MAX: usize = 8;

/// A store folder on a local file system, with io_uring for file data. Clones share the folder,
/// the rings and the counters.
#[derive(Debug, Clone)]
pub struct UringStorage {
    root: Arc<PathBuf>,
    shared: Arc<Shared>,
}

/// What the clones of a storage and its files share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Rings not owned by a file, ready for reads, folder syncs and newly written files.
    idle_rings: Mutex<Vec<Ring>>,
    counters: Arc<Counters>,
}

impl Shared {
    /// An idle ring, or a new one.
    pub(crate) fn take_ring(&self) -> io::Result<Ring> {
        let idle = self.idle_rings.lock().ok().and_then(|mut rings| rings.pop());
        match idle {
            Some(ring) => Ok(ring),
            None => Ring::new(self.counters.clone()),
        }
    }

    /// Keeps `ring` for reuse, unless it is broken or enough rings are idle already.
    pub(crate) fn give_back(&self, ring: Ring) {
        if ring.is_broken() {
            return;
        }
        if let Ok(mut rings) = self.idle_rings.lock() {
            if rings.len() < IDLE_RINGS_MAX {
                rings.push(ring);
            }
        }
    }
}

impl UringStorage {
    /// A backend for the existing folder `root`. Fails, saying why, where this process cannot use
    /// io_uring (no kernel support, switched off, forbidden by a seccomp filter).
    pub fn new(root: impl Into<PathBuf>) -> Result<UringStorage, Unavailable> {
        let shared = Arc::new(Shared::default());
        let first = probe(shared.counters.clone())?;
        shared.give_back(first);
        Ok(UringStorage { root: Arc::new(root.into()), shared })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many `io_uring_enter` calls handed operations to the kernel so far, over every clone
    /// and file of this storage. A durable write of any size costs one.
    pub fn submissions(&self) -> u64 {
        self.shared.counters.submissions.load(Ordering::Relaxed)
    }

    /// How many operations (writes, reads, syncs) were handed to the kernel so far.
    pub fn operations(&self) -> u64 {
        self.shared.counters.operations.load(Ordering::Relaxed)
    }

    fn full_path(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.root.to_path_buf()
        } else {
            self.root.join(path)
        }
    }
}

impl Storage for UringStorage {
    type File = UringFile;
    type Error = io::Error;

    fn open_file(&self, path: &str, create: bool) -> io::Result<UringFile> {
        let file = OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(self.full_path(path))?;
        Ok(UringFile::new(file, self.shared.clone()))
    }

    fn exists(&self, path: &str) -> io::Result<bool> {
        self.full_path(path).try_exists()
    }

    fn list(&self, folder: &str) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(self.full_path(folder))? {
            // Names that are not UTF-8 are not cheesedb's; leave them alone.
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn create_folder(&self, path: &str) -> io::Result<()> {
        match DirBuilder::new().mode(0o700).create(self.full_path(path)) {
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        }
    }

    fn remove_folder(&self, path: &str) -> io::Result<()> {
        fs::remove_dir(self.full_path(path))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.full_path(from), self.full_path(to))
    }

    fn remove_file(&self, path: &str) -> io::Result<()> {
        fs::remove_file(self.full_path(path))
    }

    fn sync_folder(&self, folder: &str) -> io::Result<()> {
        let folder = File::open(self.full_path(folder))?;
        let mut ring = self.shared.take_ring()?;
        let mut operations = [Operation::SyncAll { target: Target::Plain(folder.as_raw_fd()) }];
        let outcome = ring.run(&mut operations, false);
        self.shared.give_back(ring);
        match outcome?.first() {
            Some(result) if *result < 0 => Err(io::Error::from_raw_os_error(-result)),
            _ => Ok(()),
        }
    }

    fn fill_random(&self, out: &mut [u8]) -> io::Result<()> {
        getrandom::fill(out).map_err(|error| io::Error::other(error.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cheesedb_core::StorageFile;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_are_private_to_their_owner_and_folder_syncs_use_the_ring() {
        let folder = tempfile::tempdir().unwrap();
        let storage = UringStorage::new(folder.path()).unwrap();
        storage.create_folder("inner").unwrap();
        let mut file = storage.open_file("inner/data", true).unwrap();
        file.write_at(3, b"abc").unwrap();
        file.sync().unwrap();
        let before = storage.submissions();
        storage.sync_folder("inner").unwrap();
        assert_eq!(storage.submissions(), before + 1);
        let mode = |path: &str| fs::metadata(folder.path().join(path)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("inner"), 0o700);
        assert_eq!(mode("inner/data"), 0o600);
    }

    #[test]
    fn clones_share_the_counters() {
        let folder = tempfile::tempdir().unwrap();
        let storage = UringStorage::new(folder.path()).unwrap();
        let clone = storage.clone();
        clone.sync_folder("").unwrap();
        assert_eq!(storage.submissions(), 1);
        assert_eq!(storage.operations(), 1);
    }
}
