//! [`Backend`]: one storage backend under test, with a place for one store and a way to see and
//! change the bytes of its files that does not go through the backend itself.
//!
//! The behaviour tests are generic over `Backend`; [`conformance!`](crate::conformance) runs
//! each of them on every backend: the std files, the io_uring files and the simulator.

use std::fs;
use std::path::Path;

use cheesedb::{Error, FileStorage, Io, Options, SharedStorage, Store};
use cheesedb_sim::storage::{parent_of, SimStorage};

/// A storage backend under test and a place (a folder, or a simulated disk) for one store.
pub trait Backend: Sized {
    /// The storage the store runs on.
    type Storage: SharedStorage;

    /// How far apart the offsets of an every-byte test (flip each byte, cut at each length)
    /// are: 1 where reopening costs no disk sync (the simulator, which then covers every
    /// offset), more where each reopen waits for the disk.
    const OFFSET_STRIDE: usize;

    /// A new, empty place.
    fn new() -> Self;

    /// Opens the store in this place, or opens it again after the last handle was dropped.
    fn open(&self, options: Options) -> Result<Store<Self::Storage>, Error>;

    /// The backend's storage for this place, for tests that wrap it (failures, fixed
    /// randomness) and open it with `Store::open_with`.
    fn storage(&self) -> Self::Storage;

    /// Every file, by path relative to the place, with the bytes a program reads from it.
    fn files(&self) -> Vec<(String, Vec<u8>)>;

    /// The bytes of the file at `path` (which must exist).
    fn read_file(&self, path: &str) -> Vec<u8> {
        let found = self.files().into_iter().find(|(candidate, _)| candidate == path);
        found.unwrap_or_else(|| panic!("no file {path}")).1
    }

    /// The segment files of every agent, in order (one agent: oldest segment first).
    fn segment_files(&self) -> Vec<String> {
        self.files().into_iter().map(|(path, _)| path).filter(|path| path.ends_with(".log")).collect()
    }

    /// The paths of the files in which `needle` can be found: for the simulator this searches
    /// every image of a file that a crash could leave, not only the current one.
    fn files_containing(&self, needle: &[u8]) -> Vec<String>;

    /// Replaces the bytes of the file at `path`, as damage on the medium would.
    fn replace_file(&self, path: &str, bytes: &[u8]);

    /// Removes the file at `path` for good.
    fn remove_file(&self, path: &str);

    /// A second place holding a copy of every file of this one.
    fn duplicate(&self) -> Self;
}

/// Whether `haystack` contains `needle`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|window| window == needle)
}

/// A temporary folder on the local file system, reached through the std system calls
/// (`IO_URING = false`) or through io_uring (`IO_URING = true`).
#[derive(Debug)]
pub struct Files<const IO_URING: bool> {
    folder: tempfile::TempDir,
}

/// The std files backend.
pub type StdFiles = Files<false>;

/// The io_uring files backend.
pub type UringFiles = Files<true>;

impl<const IO_URING: bool> Files<IO_URING> {
    const IO: Io = if IO_URING { Io::Uring } else { Io::Std };

    /// The folder.
    pub fn path(&self) -> &Path {
        self.folder.path()
    }
}

/// Every file below `folder`, by path relative to it with `/` separators, with its bytes.
pub fn files_below(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = fs::read_dir(&current) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let (Ok(bytes), Ok(relative)) = (fs::read(&path), path.strip_prefix(folder)) {
                let parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
                found.push((parts.join("/"), bytes));
            }
        }
    }
    found.sort();
    found
}

impl<const IO_URING: bool> Backend for Files<IO_URING> {
    type Storage = FileStorage;
    // Prime, so that over a few hundred offsets every field of every record is hit.
    const OFFSET_STRIDE: usize = 7;

    fn new() -> Self {
        Files { folder: tempfile::tempdir().unwrap() }
    }

    fn open(&self, options: Options) -> Result<Store<FileStorage>, Error> {
        Store::builder(self.path()).options(options).io(Self::IO).open()
    }

    fn storage(&self) -> FileStorage {
        FileStorage::with_io(self.path(), Self::IO).unwrap()
    }

    fn files(&self) -> Vec<(String, Vec<u8>)> {
        files_below(self.path())
    }

    fn read_file(&self, path: &str) -> Vec<u8> {
        fs::read(self.path().join(path)).unwrap()
    }

    fn files_containing(&self, needle: &[u8]) -> Vec<String> {
        self.files().into_iter().filter(|(_, bytes)| contains(bytes, needle)).map(|(path, _)| path).collect()
    }

    fn replace_file(&self, path: &str, bytes: &[u8]) {
        fs::write(self.path().join(path), bytes).unwrap();
    }

    fn remove_file(&self, path: &str) {
        fs::remove_file(self.path().join(path)).unwrap();
    }

    fn duplicate(&self) -> Self {
        let copy = Self::new();
        for (path, bytes) in self.files() {
            let target = copy.path().join(path);
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::write(target, bytes).unwrap();
        }
        copy
    }
}

/// A simulated disk without faults or crashes: the engine's behaviour must not depend on which
/// disk it runs on.
#[derive(Debug)]
pub struct Simulated {
    storage: SimStorage,
}

/// The simulator's seed for its own choices (latencies, and random bytes unless wrapped).
const SIMULATION_SEED: u64 = 0x5eed_c4ee;

impl Backend for Simulated {
    type Storage = SimStorage;
    const OFFSET_STRIDE: usize = 1;

    fn new() -> Self {
        Simulated { storage: SimStorage::without_faults(SIMULATION_SEED) }
    }

    fn open(&self, options: Options) -> Result<Store<SimStorage>, Error> {
        Store::open_with(self.storage.clone(), options)
    }

    fn storage(&self) -> SimStorage {
        self.storage.clone()
    }

    fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = self
            .storage
            .file_paths()
            .into_iter()
            .filter_map(|path| self.storage.file_bytes(&path).map(|bytes| (path, bytes)))
            .collect();
        files.sort();
        files
    }

    fn files_containing(&self, needle: &[u8]) -> Vec<String> {
        let mut found = Vec::new();
        self.storage.visit_images(|path, bytes| {
            if contains(bytes, needle) && !found.iter().any(|known| known == path) {
                found.push(path.to_string());
            }
        });
        found.sort();
        found
    }

    fn replace_file(&self, path: &str, bytes: &[u8]) {
        assert!(self.storage.replace_file_bytes(path, bytes), "no file {path}");
    }

    fn remove_file(&self, path: &str) {
        use cheesedb::Storage;
        self.storage.remove_file(path).unwrap();
        self.storage.sync_folder(parent_of(path)).unwrap();
    }

    fn duplicate(&self) -> Self {
        Simulated { storage: self.storage.fork() }
    }
}

/// Instantiates generic behaviour tests, `fn name<B: Backend>()`, once per backend: in modules
/// `std_files`, `io_uring` (Linux only) and `simulator`. A generic test left out of the list is
/// never called, which the dead-code lint reports.
#[macro_export]
macro_rules! conformance {
    ($($test:ident),+ $(,)?) => {
        mod std_files {
            $(#[test]
            fn $test() {
                super::$test::<$crate::backend::StdFiles>();
            })+
        }
        #[cfg(target_os = "linux")]
        mod io_uring {
            $(#[test]
            fn $test() {
                super::$test::<$crate::backend::UringFiles>();
            })+
        }
        mod simulator {
            $(#[test]
            fn $test() {
                super::$test::<$crate::backend::Simulated>();
            })+
        }
    };
}
