//! The files backend: a folder on a local file system, reached through ordinary system calls
//! or, on Linux, through io_uring ([`Io`]), chosen when the storage is made.
//!
//! Durability with [`Io::Std`]: a data sync is `fdatasync` on Linux and `F_FULLFSYNC` on macOS
//! (a plain fsync there leaves the data in the drive's cache). A folder sync opens the folder and
//! syncs it, which makes creates, renames and removes inside it durable. With [`Io::Uring`] the
//! same syncs go through the ring (see the `cheesedb-io-uring` crate). Folders are made 0700,
//! files 0600, either way.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cheesedb_core::{Storage, StorageFile};

use crate::io::Io;
use crate::uring::{UringFile, UringStorage};

/// A store folder on the local file system. Clones share the same folder.
#[derive(Debug, Clone)]
pub struct FileStorage {
    root: Arc<PathBuf>,
    uring: Option<UringStorage>,
}

/// One open file of a [`FileStorage`].
#[derive(Debug)]
pub struct FileHandle {
    handle: Handle,
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
    pub fn new(root: impl Into<PathBuf>) -> FileStorage {
        FileStorage { root: Arc::new(root.into()), uring: None }
    }

    /// A backend for the existing folder `root` that goes through `io`. With [`Io::Uring`] this
    /// probes the kernel, and fails with an error that says why where io_uring cannot be used
    /// (not Linux, an old kernel, switched off, forbidden by a seccomp filter).
    pub fn with_io(root: impl Into<PathBuf>, io: Io) -> io::Result<FileStorage> {
        let root = root.into();
        let uring = match io {
            Io::Std => None,
            Io::Uring => Some(UringStorage::new(root.clone()).map_err(io::Error::from)?),
        };
        Ok(FileStorage { root: Arc::new(root), uring })
    }

    /// The system interface the files go through.
    pub fn io(&self) -> Io {
        if self.uring.is_some() {
            Io::Uring
        } else {
            Io::Std
        }
    }

    /// How many io_uring submissions (`io_uring_enter` calls carrying operations) this storage
    /// and its clones have made: 0 with [`Io::Std`]. Shows that io_uring is really at work.
    pub fn io_uring_submissions(&self) -> u64 {
        self.uring.as_ref().map_or(0, UringStorage::submissions)
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full_path(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.root.to_path_buf()
        } else {
            self.root.join(path)
        }
    }
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

// Names (create, list, rename, remove) and randomness use the ordinary system calls with either
// `Io`: io_uring would hand them to a kernel worker and gain nothing. File data and syncs follow
// the chosen `Io`.
impl Storage for FileStorage {
    type File = FileHandle;
    type Error = io::Error;

    fn open_file(&self, path: &str, create: bool) -> io::Result<FileHandle> {
        if let Some(uring) = &self.uring {
            return Ok(FileHandle { handle: Handle::Uring(Box::new(uring.open_file(path, create)?)) });
        }
        let file = OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(self.full_path(path))?;
        Ok(FileHandle { handle: Handle::Std(file) })
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
        if let Some(uring) = &self.uring {
            return uring.sync_folder(folder);
        }
        durable_folder_sync(&File::open(self.full_path(folder))?)
    }

    fn fill_random(&self, out: &mut [u8]) -> io::Result<()> {
        getrandom::fill(out).map_err(|error| io::Error::other(error.to_string()))
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
        match &mut self.handle {
            Handle::Std(file) => file.write_all_at(bytes, offset),
            Handle::Uring(file) => file.write_at(offset, bytes),
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        match &mut self.handle {
            Handle::Std(file) => durable_sync(file),
            Handle::Uring(file) => file.sync(),
        }
    }

    fn set_len(&mut self, length: u64) -> io::Result<()> {
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
        let mode = |path: &str| fs::metadata(folder.path().join(path)).unwrap().permissions().mode() & 0o777;
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
        assert_eq!(fs::read(folder.path().join("data")).unwrap(), b"\0\0\0abc");
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
