//! Any backend, failing or slowing chosen operations on demand and counting syncs, to test how
//! the engine reacts.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cheesedb::{FileStorage, Storage, StorageError, StorageErrorKind, StorageFile};

/// Which operations fail from now on.
#[derive(Debug, Default)]
pub struct Faults {
    /// File syncs fail.
    pub fail_sync: AtomicBool,
    /// Renames fail.
    pub fail_rename: AtomicBool,
    /// File removals fail.
    pub fail_remove: AtomicBool,
    /// Each file sync first sleeps this many microseconds.
    pub sync_delay_microseconds: AtomicU64,
    /// File syncs done so far.
    pub syncs: AtomicU64,
    /// Syncs of chosen files fail, once armed with [`Faults::fail_syncs_of`].
    pub sync_fault: Mutex<Option<SyncFault>>,
}

/// Which file's syncs fail: those whose path ends with `path_suffix`, after `pass` more of them
/// succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFault {
    /// The end of the path of the files whose syncs fail.
    pub path_suffix: String,
    /// How many of their syncs still succeed first.
    pub pass: u64,
}

impl Faults {
    /// From now on, syncs of files whose path ends with `path_suffix` fail, after `pass` more
    /// of them succeeded; until [`Faults::heal_syncs`].
    pub fn fail_syncs_of(&self, path_suffix: &str, pass: u64) {
        *self.sync_fault.lock().unwrap() = Some(SyncFault { path_suffix: path_suffix.to_string(), pass });
    }

    /// Stops failing the syncs [`Faults::fail_syncs_of`] chose.
    pub fn heal_syncs(&self) {
        *self.sync_fault.lock().unwrap() = None;
    }

    /// Whether this sync of `path` is one to fail (and counts it if it passes).
    fn sync_fails(&self, path: &str) -> bool {
        let mut chosen = self.sync_fault.lock().unwrap();
        match chosen.as_mut() {
            Some(fault) if path.ends_with(&fault.path_suffix) => {
                if fault.pass == 0 {
                    return true;
                }
                fault.pass -= 1;
                false
            }
            _ => false,
        }
    }
}

/// A storage (std files unless said otherwise) with switchable failures.
#[derive(Debug, Clone)]
pub struct FaultyStorage<S = FileStorage> {
    inner: S,
    /// The switches, shared with the test.
    pub faults: Arc<Faults>,
}

impl FaultyStorage<FileStorage> {
    /// Std files in `root`, failing nothing yet.
    pub fn new(root: &Path) -> FaultyStorage<FileStorage> {
        FaultyStorage::wrap(FileStorage::new(root))
    }
}

impl<S> FaultyStorage<S> {
    /// `inner`, failing nothing yet.
    pub fn wrap(inner: S) -> FaultyStorage<S> {
        FaultyStorage { inner, faults: Arc::default() }
    }
}

/// A file of a [`FaultyStorage`].
#[derive(Debug)]
pub struct FaultyFile<F = <FileStorage as Storage>::File> {
    inner: F,
    faults: Arc<Faults>,
    path: String,
}

/// An injected failure, or the inner backend's own error.
#[derive(Debug)]
pub enum FaultyError<E> {
    /// The test switched this operation to fail.
    Injected(&'static str),
    /// The backend failed by itself.
    Inner(E),
}

impl<E: fmt::Display> fmt::Display for FaultyError<E> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultyError::Injected(what) => write!(formatter, "injected failure: {what}"),
            FaultyError::Inner(error) => error.fmt(formatter),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for FaultyError<E> {}

impl<E: StorageError> StorageError for FaultyError<E> {
    fn kind(&self) -> StorageErrorKind {
        match self {
            FaultyError::Injected(_) => StorageErrorKind::Other,
            FaultyError::Inner(error) => error.kind(),
        }
    }
}

impl<S: Storage> Storage for FaultyStorage<S> {
    type File = FaultyFile<S::File>;
    type Error = FaultyError<S::Error>;

    fn open_file(&self, path: &str, create: bool) -> Result<Self::File, Self::Error> {
        let inner = self.inner.open_file(path, create).map_err(FaultyError::Inner)?;
        Ok(FaultyFile { inner, faults: self.faults.clone(), path: path.to_string() })
    }
    fn exists(&self, path: &str) -> Result<bool, Self::Error> {
        self.inner.exists(path).map_err(FaultyError::Inner)
    }
    fn holds(&self, path: &str, kind: cheesedb::NameKind) -> Result<bool, Self::Error> {
        self.inner.holds(path, kind).map_err(FaultyError::Inner)
    }
    fn list(&self, folder: &str) -> Result<Vec<String>, Self::Error> {
        self.inner.list(folder).map_err(FaultyError::Inner)
    }
    fn create_folder(&self, path: &str) -> Result<(), Self::Error> {
        self.inner.create_folder(path).map_err(FaultyError::Inner)
    }
    fn remove_folder(&self, path: &str) -> Result<(), Self::Error> {
        self.inner.remove_folder(path).map_err(FaultyError::Inner)
    }
    fn rename(&self, from: &str, to: &str) -> Result<(), Self::Error> {
        if self.faults.fail_rename.load(Ordering::SeqCst) {
            return Err(FaultyError::Injected("rename"));
        }
        self.inner.rename(from, to).map_err(FaultyError::Inner)
    }
    fn remove_file(&self, path: &str) -> Result<(), Self::Error> {
        if self.faults.fail_remove.load(Ordering::SeqCst) {
            return Err(FaultyError::Injected("remove"));
        }
        self.inner.remove_file(path).map_err(FaultyError::Inner)
    }
    fn sync_folder(&self, folder: &str) -> Result<(), Self::Error> {
        self.inner.sync_folder(folder).map_err(FaultyError::Inner)
    }
    fn fill_random(&self, out: &mut [u8]) -> Result<(), Self::Error> {
        self.inner.fill_random(out).map_err(FaultyError::Inner)
    }
}

impl<F: StorageFile> StorageFile for FaultyFile<F> {
    type Error = FaultyError<F::Error>;

    fn len(&self) -> Result<u64, Self::Error> {
        self.inner.len().map_err(FaultyError::Inner)
    }
    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), Self::Error> {
        self.inner.read_at(offset, out).map_err(FaultyError::Inner)
    }
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Self::Error> {
        self.inner.write_at(offset, bytes).map_err(FaultyError::Inner)
    }
    fn sync(&mut self) -> Result<(), Self::Error> {
        let delay = self.faults.sync_delay_microseconds.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_micros(delay));
        if self.faults.fail_sync.load(Ordering::SeqCst) || self.faults.sync_fails(&self.path) {
            return Err(FaultyError::Injected("sync"));
        }
        self.faults.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync().map_err(FaultyError::Inner)
    }
    fn set_len(&mut self, length: u64) -> Result<(), Self::Error> {
        self.inner.set_len(length).map_err(FaultyError::Inner)
    }
}
