//! One writer or any number of readers per store folder: a non-blocking `flock` on the store
//! folder itself, exclusive for a read-write open and shared for a read-only one, held as long
//! as the store or any agent handle of it lives. A folder cannot be unlinked from under its
//! holder the way a lock file could, and the kernel drops the lock when the process ends, so a
//! crash never leaves a stale one. A `lock` file left by older versions is ignored. A lock that
//! looks taken is asked for again for about 100 ms before the open answers `Error::Locked`, since
//! a child process this one starts holds a copy of it until the child execs.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

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
        // A child process that any thread of this one starts holds a copy of every descriptor
        // from its start until it execs, so a lock this process let go a moment ago may still
        // look taken: ask again for a short while before answering that another holder has it.
        let mut pause = FIRST_PAUSE;
        loop {
            match flock(&folder, operation) {
                Ok(()) => return Ok(FolderLock { _folder: folder }),
                Err(rustix::io::Errno::WOULDBLOCK) if pause <= LAST_PAUSE => {
                    std::thread::sleep(pause);
                    pause *= 2;
                }
                Err(rustix::io::Errno::WOULDBLOCK) => return Err(Error::Locked),
                Err(errno) => return Err(lock_error(path, errno)),
            }
        }
    }
}

/// The first pause before asking for a lock again; each next one is twice as long.
const FIRST_PAUSE: Duration = Duration::from_micros(100);
/// The last pause: about 100 ms in all, far more than a child takes to exec on a busy machine,
/// and short enough that a store another program holds is reported at once to a person.
const LAST_PAUSE: Duration = Duration::from_micros(51_200);

fn lock_error(path: &Path, errno: rustix::io::Errno) -> Error {
    Error::from_storage(StorageOperation::Locking, &path.display().to_string(), std::io::Error::from(errno))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    fn open_folder(path: &Path) -> OwnedFd {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::open(path, flags, Mode::empty()).unwrap()
    }

    #[test]
    fn a_lock_taken_elsewhere_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let root = open_folder(folder.path());
        let held = FolderLock::acquire(root.as_fd(), folder.path(), false).unwrap();
        assert_eq!(FolderLock::acquire(root.as_fd(), folder.path(), false).unwrap_err(), Error::Locked);
        assert_eq!(FolderLock::acquire(root.as_fd(), folder.path(), true).unwrap_err(), Error::Locked);
        drop(held);
        FolderLock::acquire(root.as_fd(), folder.path(), false).unwrap();
    }

    /// Regression: a child process holds a copy of the lock's descriptor from its start until it
    /// execs, so a lock this process just let go looked taken for that moment.
    #[test]
    fn a_lock_let_go_is_taken_again_while_another_thread_starts_children() {
        const ROUNDS: u32 = 2_000;
        const CHILDREN: u32 = 50;
        let folder = tempfile::tempdir().unwrap();
        let root = open_folder(folder.path());
        let stop = AtomicBool::new(false);
        let started = AtomicU32::new(0);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::process::Command::new("true").status().unwrap();
                    started.fetch_add(1, Ordering::Relaxed);
                }
            });
            // The rounds go on until enough children overlapped them, however the two threads
            // happen to be scheduled: a fast machine may finish the rounds before the first one.
            let mut refused = 0u32;
            let mut rounds = 0u32;
            while rounds < ROUNDS || started.load(Ordering::Relaxed) < CHILDREN {
                match FolderLock::acquire(root.as_fd(), folder.path(), false) {
                    Ok(lock) => drop(lock),
                    Err(error) => {
                        assert_eq!(error, Error::Locked);
                        refused += 1;
                    }
                }
                rounds += 1;
            }
            stop.store(true, Ordering::Relaxed);
            assert_eq!(refused, 0, "rounds refused while a child held a copy of the lock");
        });
    }
}
