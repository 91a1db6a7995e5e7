//! The io_uring backend where the system has it (Linux), and an uninhabited stand-in elsewhere,
//! so [`FileStorage`](crate::FileStorage) dispatches to it without a `cfg` on every method.

#[cfg(target_os = "linux")]
pub(crate) use cheesedb_io_uring::{UringFile, UringStorage};

#[cfg(not(target_os = "linux"))]
pub(crate) use absent::{UringFile, UringStorage};

#[cfg(not(target_os = "linux"))]
mod absent {
    use std::io;
    use std::path::PathBuf;

    use cheesedb_core::{Storage, StorageFile};

    /// No value exists: opening always fails on this system.
    #[derive(Debug, Clone)]
    pub(crate) enum UringStorage {}

    /// No value exists, since no storage does.
    #[derive(Debug)]
    pub(crate) enum UringFile {}

    impl UringStorage {
        pub(crate) fn new(_root: PathBuf) -> io::Result<UringStorage> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "io_uring is unavailable: it exists only on Linux; use the std files backend instead",
            ))
        }

        pub(crate) fn submissions(&self) -> u64 {
            match *self {}
        }
    }

    impl Storage for UringStorage {
        type File = UringFile;
        type Error = io::Error;

        fn open_file(&self, _: &str, _: bool) -> io::Result<UringFile> {
            match *self {}
        }
        fn exists(&self, _: &str) -> io::Result<bool> {
            match *self {}
        }
        fn list(&self, _: &str) -> io::Result<Vec<String>> {
            match *self {}
        }
        fn create_folder(&self, _: &str) -> io::Result<()> {
            match *self {}
        }
        fn remove_folder(&self, _: &str) -> io::Result<()> {
            match *self {}
        }
        fn rename(&self, _: &str, _: &str) -> io::Result<()> {
            match *self {}
        }
        fn remove_file(&self, _: &str) -> io::Result<()> {
            match *self {}
        }
        fn sync_folder(&self, _: &str) -> io::Result<()> {
            match *self {}
        }
        fn fill_random(&self, _: &mut [u8]) -> io::Result<()> {
            match *self {}
        }
    }

    impl StorageFile for UringFile {
        type Error = io::Error;

        fn len(&self) -> io::Result<u64> {
            match *self {}
        }
        fn read_at(&self, _: u64, _: &mut [u8]) -> io::Result<()> {
            match *self {}
        }
        fn write_at(&mut self, _: u64, _: &[u8]) -> io::Result<()> {
            match *self {}
        }
        fn sync(&mut self) -> io::Result<()> {
            match *self {}
        }
        fn set_len(&mut self, _: u64) -> io::Result<()> {
            match *self {}
        }
    }
}
