//! The files backend: a folder on a local file system, reached through ordinary system calls
//! or, on Linux, through io_uring ([`Io`]), chosen when the storage is made.
//!
//! Durability with [`Io::Std`]: a data sync is `fdatasync` on Linux and `F_FULLFSYNC` on macOS
//! (a plain fsync there leaves the data in the drive's cache). A folder sync opens the folder and
//! syncs it, which makes creates, renames and removes inside it durable. With [`Io::Uring`] the
//! same syncs go through the ring (see the `cheesedb-io-uring` crate). Folders are made 0700,
//! files 0600, either way.

use std::fs::{DirBuilder, File};
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::{DirBuilderExt, FileExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cheesedb_core::{Error, NameKind, Storage, StorageBackend, StorageFile};

use crate::folder::{Access, StoreFolder};
use crate::io::Io;
use crate::uring::{start_uring, UringFile, UringStorage};

/// A store folder on the local file system. Clones share the same folder.
///
/// No name inside the folder is ever reached through a symbolic link (the folder itself may be
/// one): a link where a file or folder of the store should be is refused with an error naming
/// it, and left untouched.
#[derive(Debug, Clone)]
pub struct FileStorage {
    folder: Arc<StoreFolder>,
    uring: Option<UringStorage>,
    read_only: bool,
    /// Set when a read-only storage refused a change, so an open that needed one can say so.
    refused_change: Arc<AtomicBool>,
}

/// One open file of a [`FileStorage`].
#[derive(Debug)]
pub struct FileHandle {
    handle: Handle,
    read_only: Option<Arc<AtomicBool>>,
}

/// The file as the chosen [`Io`] holds it.
#[derive(Debug)]
enum Handle {
    Std(File),
    /// Boxed: a ring's state is large, and std handles should not pay for it.
    Uring(Box<UringFile>),
}

impl FileStorage {
    /// A backend for the existing folder `root`, with ordinary system calls ([`Io::Std`]).
    /// The folder is opened at first use.
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> FileStorage {
        FileStorage::from_parts(root.into(), None, false)
    }

    /// A backend for the existing folder `root` that goes through `io`. With [`Io::Uring`] this
    /// probes the kernel, and fails with an error that says why where io_uring cannot be used
    /// (not Linux, an old kernel, switched off, forbidden by a seccomp filter).
    ///
    /// # Errors
    ///
    /// With [`Io::Uring`], an error of kind `Unsupported` saying why io_uring cannot be used;
    /// [`Io::Std`] never fails.
    pub fn with_io(root: impl Into<PathBuf>, io: Io) -> io::Result<FileStorage> {
        FileStorage::open(root.into(), io, false).map_err(|error| io::Error::new(io::ErrorKind::Unsupported, error))
    }

    /// A backend for the folder `root` through `io` (the folder is opened at first use). With `read_only`,
    /// files are opened for reading only and every change (create, write, rename, remove) is
    /// refused before it reaches the system; syncs do nothing, since nothing was written.
    pub(crate) fn open(root: PathBuf, io: Io, read_only: bool) -> Result<FileStorage, Error> {
        let uring = match io {
            Io::Std => None,
            Io::Uring => Some(
                start_uring().map_err(|reason| Error::BackendUnavailable { backend: StorageBackend::Uring, reason })?,
            ),
        };
        Ok(FileStorage::from_parts(root, uring, read_only))
    }

    fn from_parts(root: PathBuf, uring: Option<UringStorage>, read_only: bool) -> FileStorage {
        let folder = Arc::new(StoreFolder::new(root));
        FileStorage { folder, uring, read_only, refused_change: Arc::new(AtomicBool::new(false)) }
    }

    /// The system interface the files go through.
    #[must_use]
    pub fn io(&self) -> Io {
        if self.uring.is_some() {
            Io::Uring
        } else {
            Io::Std
        }
    }

    /// How many io_uring submissions (`io_uring_enter` calls carrying operations) this storage
    /// and its clones have made: 0 with [`Io::Std`]. Shows that io_uring is really at work.
    #[must_use]
    pub fn io_uring_submissions(&self) -> u64 {
        self.uring.as_ref().map_or(0, UringStorage::submissions)
    }

    /// The folder.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.folder.root()
    }

    /// The open root folder.
    pub(crate) fn root_descriptor(&self) -> io::Result<BorrowedFd<'_>> {
        self.folder.root_descriptor()
    }

    /// The flag a read-only storage sets when it refuses a change.
    pub(crate) fn refusal_flag(&self) -> Arc<AtomicBool> {
        self.refused_change.clone()
    }

    /// Fails when the storage is read-only, noting that a change was refused.
    fn check_writable(&self) -> io::Result<()> {
        if self.read_only {
            self.refused_change.store(true, Ordering::Relaxed);
            return Err(read_only_refusal());
        }
        Ok(())
    }
}

/// The error of a change refused by a read-only storage.
fn read_only_refusal() -> io::Error {
    io::Error::new(io::ErrorKind::ReadOnlyFilesystem, "the store is open read-only")
}

/// Makes `folder` with mode 0700 (and its parents), if it does not exist.
pub fn create_private_folder(folder: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

/// Flushes a file's data (and the metadata needed to read it back) to stable storage.
fn durable_sync(file: &File) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    {
        rustix::fs::fcntl_fullfsync(file).map_err(io::Error::from)
    }
    #[cfg(not(target_vendor = "apple"))]
    {
        file.sync_data()
    }
}

/// Flushes a folder's entries (creates, renames, removes) to stable storage.
fn durable_folder_sync(folder: &File) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    {
        rustix::fs::fcntl_fullfsync(folder).map_err(io::Error::from)
    }
    #[cfg(not(target_vendor = "apple"))]
    {
        folder.sync_all()
    }
}

// Names (create, list, rename, remove) go through the store folder's own code with either `Io`,
// never through a link; io_uring would hand them to a kernel worker and gain nothing. File data
// and syncs follow the chosen `Io`.
impl Storage for FileStorage {
    type File = FileHandle;
    type Error = io::Error;

    fn open_file(&self, path: &str, create: bool) -> io::Result<FileHandle> {
        if create {
            self.check_writable()?;
        }
        let access = if self.read_only { Access::ReadOnly } else { Access::ReadWrite { create } };
        let file = self.folder.open_file(path, access)?;
        let handle = match &self.uring {
            Some(uring) => uring_handle(uring, file),
            None => Handle::Std(file),
        };
        let read_only = self.read_only.then(|| self.refused_change.clone());
        Ok(FileHandle { handle, read_only })
    }

    fn exists(&self, path: &str) -> io::Result<bool> {
        self.folder.exists(path)
    }

    fn holds(&self, path: &str, kind: NameKind) -> io::Result<bool> {
        self.folder.holds(path, kind)
    }

    fn list(&self, folder: &str) -> io::Result<Vec<String>> {
        self.folder.list(folder)
    }

    fn create_folder(&self, path: &str) -> io::Result<()> {
        self.check_writable()?;
        self.folder.create_folder(path)
    }

    fn remove_folder(&self, path: &str) -> io::Result<()> {
        self.check_writable()?;
        self.folder.remove_folder(path)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.check_writable()?;
        self.folder.rename(from, to)
    }

    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.check_writable()?;
        self.folder.remove_file(path)
    }

    fn sync_folder(&self, folder: &str) -> io::Result<()> {
        if self.read_only {
            // Nothing was changed through this storage, so there is nothing to make durable.
            return Ok(());
        }
        let opened = self.folder.open_folder(folder)?;
        match &self.uring {
            Some(uring) => uring.sync_folder(&opened),
            None => durable_folder_sync(&opened),
        }
    }

    fn fill_random(&self, out: &mut [u8]) -> io::Result<()> {
        getrandom::fill(out).map_err(|error| io::Error::other(error.to_string()))
    }
}

/// `file`, with its data and syncs going through `uring`.
// Where io_uring does not exist, `UringStorage` has no value, so this is never reached.
#[cfg_attr(not(target_os = "linux"), allow(unreachable_code))]
fn uring_handle(uring: &UringStorage, file: File) -> Handle {
    Handle::Uring(Box::new(uring.adopt_file(file)))
}

impl FileHandle {
    /// Fails when the file was opened read-only, noting that a change was refused.
    fn check_writable(&self) -> io::Result<()> {
        if let Some(refused) = &self.read_only {
            refused.store(true, Ordering::Relaxed);
            return Err(read_only_refusal());
        }
        Ok(())
    }
}

impl StorageFile for FileHandle {
    type Error = io::Error;

    fn len(&self) -> io::Result<u64> {
        match &self.handle {
            Handle::Std(file) => Ok(file.metadata()?.len()),
            Handle::Uring(file) => file.len(),
        }
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        match &self.handle {
            Handle::Std(file) => file.read_exact_at(out, offset),
            Handle::Uring(file) => file.read_at(offset, out),
        }
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.check_writable()?;
        match &mut self.handle {
            Handle::Std(file) => file.write_all_at(bytes, offset),
            Handle::Uring(file) => file.write_at(offset, bytes),
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        if self.read_only.is_some() {
            // Nothing can have been written through a read-only handle.
            return Ok(());
        }
        match &mut self.handle {
            Handle::Std(file) => durable_sync(file),
            Handle::Uring(file) => file.sync(),
        }
    }

    fn set_len(&mut self, length: u64) -> io::Result<()> {
        self.check_writable()?;
        match &mut self.handle {
            Handle::Std(file) => file.set_len(length),
            Handle::Uring(file) => file.set_len(length),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_are_private_to_their_owner() {
        let folder = tempfile::tempdir().unwrap();
        let storage = FileStorage::new(folder.path());
        storage.create_folder("inner").unwrap();
        let mut file = storage.open_file("inner/data", true).unwrap();
        file.write_at(3, b"abc").unwrap();
        file.sync().unwrap();
        storage.sync_folder("inner").unwrap();
        let mode = |path: &str| std::fs::metadata(folder.path().join(path)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("inner"), 0o700);
        assert_eq!(mode("inner/data"), 0o600);
        let mut back = [0u8; 6];
        file.read_at(0, &mut back).unwrap();
        assert_eq!(&back, b"\0\0\0abc");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn io_uring_files_write_the_same_bytes_and_count_submissions() {
        let folder = tempfile::tempdir().unwrap();
        let storage = FileStorage::with_io(folder.path(), Io::Uring).unwrap();
        assert_eq!(storage.io(), Io::Uring);
        let mut file = storage.open_file("data", true).unwrap();
        file.write_at(3, b"abc").unwrap();
        file.sync().unwrap();
        assert_eq!(storage.io_uring_submissions(), 1);
        assert_eq!(std::fs::read(folder.path().join("data")).unwrap(), b"\0\0\0abc");
        assert_eq!(FileStorage::new(folder.path()).io_uring_submissions(), 0);
    }

    #[test]
    fn random_bytes_differ() {
        let storage = FileStorage::new(".");
        let (mut first, mut second) = ([0u8; 32], [0u8; 32]);
        storage.fill_random(&mut first).unwrap();
        storage.fill_random(&mut second).unwrap();
        assert_ne!(first, second);
    }
}
