//! A files backend that fails or slows chosen operations on demand and counts syncs, to test
//! how the engine reacts.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cheesedb::{FileStorage, Storage, StorageFile};

/// Which operations fail from now on.
#[derive(Debug, Default)]
pub struct Faults {
    /// File syncs fail.
    pub fail_sync: AtomicBool,
    /// Renames fail.
    pub fail_rename: AtomicBool,
    /// Each file sync first sleeps this many microseconds.
    pub sync_delay_microseconds: AtomicU64,
    /// File syncs done so far.
    pub syncs: AtomicU64,
}

/// [`FileStorage`] with switchable failures.
#[derive(Debug, Clone)]
pub struct FaultyStorage {
    inner: FileStorage,
    /// The switches, shared with the test.
    pub faults: Arc<Faults>,
}

impl FaultyStorage {
    /// Files in `root`, failing nothing yet.
    pub fn new(root: &std::path::Path) -> FaultyStorage {
        FaultyStorage { inner: FileStorage::new(root), faults: Arc::default() }
    }
}

/// A file of a [`FaultyStorage`].
#[derive(Debug)]
pub struct FaultyFile {
    inner: <FileStorage as Storage>::File,
    faults: Arc<Faults>,
}

fn injected(what: &str) -> io::Error {
    io::Error::other(format!("injected failure: {what}"))
}

impl Storage for FaultyStorage {
    type File = FaultyFile;
    type Error = io::Error;

    fn open_file(&self, path: &str, create: bool) -> io::Result<FaultyFile> {
        Ok(FaultyFile { inner: self.inner.open_file(path, create)?, faults: self.faults.clone() })
    }
    fn exists(&self, path: &str) -> io::Result<bool> {
        self.inner.exists(path)
    }
    fn list(&self, folder: &str) -> io::Result<Vec<String>> {
        self.inner.list(folder)
    }
    fn create_folder(&self, path: &str) -> io::Result<()> {
        self.inner.create_folder(path)
    }
    fn remove_folder(&self, path: &str) -> io::Result<()> {
        self.inner.remove_folder(path)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        if self.faults.fail_rename.load(Ordering::SeqCst) {
            return Err(injected("rename"));
        }
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn sync_folder(&self, folder: &str) -> io::Result<()> {
        self.inner.sync_folder(folder)
    }
    fn fill_random(&self, out: &mut [u8]) -> io::Result<()> {
        self.inner.fill_random(out)
    }
}

impl StorageFile for FaultyFile {
    type Error = io::Error;

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, out)
    }
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        let delay = self.faults.sync_delay_microseconds.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_micros(delay));
        if self.faults.fail_sync.load(Ordering::SeqCst) {
            return Err(injected("sync"));
        }
        self.faults.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync()
    }
    fn set_len(&mut self, length: u64) -> io::Result<()> {
        self.inner.set_len(length)
    }
}
