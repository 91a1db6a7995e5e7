//! One writer or any number of readers per store folder: a non-blocking `flock` on the store
//! folder itself, exclusive for a read-write open and shared for a read-only one, held as long
//! as the store or any agent handle of it lives. A folder cannot be unlinked from under its
//! holder the way a lock file could, and the kernel drops the lock when the process ends, so a
//! crash never leaves a stale one. A `lock` file left by older versions is ignored.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use cheesedb_core::{Error, StorageOperation};
use rustix::fs::{flock, FlockOperation, Mode, OFlags};

/// The name of the lock file that older versions kept in the store folder. It is no longer
/// made or used; one left behind is harmless.
pub const LOCK_FILE: &str = "lock";

/// A held lock on a store folder.
#[derive(Debug)]
pub struct FolderLock {
    _folder: OwnedFd,
}

impl FolderLock {
    /// Takes the lock on the open folder `root` (exclusive unless `shared`), or fails at once
    /// with `Error::Locked` if an open store holds it in a way that excludes this one.
    pub fn acquire(root: BorrowedFd<'_>, path: &Path, shared: bool) -> Result<FolderLock, Error> {
        // A descriptor of its own: a lock belongs to an open file description, and this one
        // must not be shared with any other open of the folder.
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let folder = rustix::fs::openat(root, ".", flags, Mode::empty()).map_err(|errno| lock_error(path, errno))?;
        let operation =
            if shared { FlockOperation::NonBlockingLockShared } else { FlockOperation::NonBlockingLockExclusive };
        match flock(&folder, operation) {
            Ok(()) => Ok(FolderLock { _folder: folder }),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(Error::Locked),
            Err(errno) => Err(lock_error(path, errno)),
        }
    }
}

fn lock_error(path: &Path, errno: rustix::io::Errno) -> Error {
    Error::from_storage(StorageOperation::Locking, &path.display().to_string(), std::io::Error::from(errno))
}
