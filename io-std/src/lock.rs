//! One open store per folder: an exclusive, non-blocking `flock` on a `lock` file, held as long
//! as the store or any agent handle of it lives. The kernel drops it when the process ends, so a
//! crash never leaves a stale lock.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use cheesedb_core::Error;
use rustix::fs::{flock, FlockOperation};

/// The name of the lock file in the store folder.
pub const LOCK_FILE: &str = "lock";

/// A held lock on a store folder.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

impl FolderLock {
    /// Takes the lock, or fails at once with `Error::Locked` if another open store holds it.
    pub fn acquire(folder: &Path) -> Result<FolderLock, Error> {
        let path = folder.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|error| lock_error(&path, error))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(FolderLock { _file: file }),
            Err(rustix::io::Errno::WOULDBLOCK) => Err(Error::Locked),
            Err(errno) => Err(lock_error(&path, io::Error::from(errno))),
        }
    }
}

fn lock_error(path: &Path, error: io::Error) -> Error {
    Error::Io { operation: "locking", path: path.display().to_string(), message: error.to_string() }
}
