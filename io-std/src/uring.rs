//! The io_uring backend where the system has it (Linux), and an uninhabited stand-in elsewhere,
//! so [`FileStorage`](crate::FileStorage) dispatches to it without a `cfg` on every method.

#[cfg(target_os = "linux")]
pub(crate) use cheesedb_io_uring::{UringFile, UringStorage};

#[cfg(not(target_os = "linux"))]
pub(crate) use absent::{UringFile, UringStorage};

/// Starts the io_uring backend, or says why this system cannot run it.
#[cfg(target_os = "linux")]
pub(crate) fn start_uring() -> Result<UringStorage, String> {
    UringStorage::new().map_err(|unavailable| String::from(unavailable.reason()))
}

/// Starts the io_uring backend, or says why this system cannot run it.
#[cfg(not(target_os = "linux"))]
pub(crate) fn start_uring() -> Result<UringStorage, String> {
    Err(String::from("io_uring exists only on Linux"))
}

#[cfg(not(target_os = "linux"))]
mod absent {
    use std::fs::File;
    use std::io;

    use cheesedb_core::StorageFile;

    /// No value exists: opening always fails on this system.
    #[derive(Debug, Clone)]
    pub(crate) enum UringStorage {}

    /// No value exists, since no storage does.
    #[derive(Debug)]
    pub(crate) enum UringFile {}

    impl UringStorage {
        pub(crate) fn submissions(&self) -> u64 {
            match *self {}
        }

        pub(crate) fn adopt_file(&self, _: File) -> UringFile {
            match *self {}
        }

        pub(crate) fn sync_folder(&self, _: &File) -> io::Result<()> {
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
