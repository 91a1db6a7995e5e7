//! The io_uring backend of cheesedb, for Linux.
//!
//! [`UringStorage`] holds the rings; a file opened by the `cheesedb` crate (which reaches every
//! name of a store itself, never through a link) is handed to it and becomes a [`UringFile`],
//! which implements the engine's [`StorageFile`](cheesedb_core::StorageFile) trait. A write
//! is queued as an owned buffer; `sync` hands every queued write and one `fdatasync` to the
//! kernel in a single submission, each operation linked (`IO_LINK`) to the one before, so the
//! sync starts only after every write succeeded. It returns only once every completion is in
//! and successful: anything else is an error, and the engine then stops writing. A batch or a
//! group commit is one write and one sync, so it costs one submission. Large reads (an agent's
//! replay reads each segment whole) are split into 1 MiB pieces read in parallel. Folder syncs
//! after create, rename and remove are an `fsync` through the ring as well.
//!
//! Opening probes the kernel: where io_uring cannot be used (no kernel support, switched off by
//! `kernel.io_uring_disabled`, forbidden by a seccomp filter), [`UringStorage::new`] fails with
//! an [`Unavailable`] error that says why. There is no silent fallback; the
//! [`submissions`](UringStorage::submissions) counter shows the rings at work.
//!
//! On other operating systems this crate is empty. Users reach this backend through the
//! `cheesedb` crate (`Store::builder(path).options(options).io(Io::Uring).open()`):
//!
//! ```
//! # #[cfg(target_os = "linux")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use cheesedb_core::StorageFile;
//! use cheesedb_io_uring::UringStorage;
//!
//! # let folder = tempfile::tempdir()?;
//! let storage = UringStorage::new()?;
//! let opened = std::fs::File::options().read(true).write(true).create(true).truncate(false).open(folder.path().join("notes"))?;
//! let mut file = storage.adopt_file(opened);
//! file.write_at(0, b"first")?;
//! file.write_at(5, b" second")?;
//! file.sync()?; // both writes and the fdatasync: one submission
//! storage.sync_folder(&std::fs::File::open(folder.path())?)?; // the new name is durable too
//! assert_eq!(storage.submissions(), 2);
//! # Ok(())
//! # }
//! # #[cfg(not(target_os = "linux"))]
//! # fn main() {}
//! ```
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]

#[cfg(target_os = "linux")]
mod file;
#[cfg(target_os = "linux")]
mod pool;
#[cfg(target_os = "linux")]
mod probe;
#[cfg(target_os = "linux")]
mod ring;
#[cfg(target_os = "linux")]
mod storage;

#[cfg(target_os = "linux")]
pub use file::UringFile;
#[cfg(target_os = "linux")]
pub use probe::Unavailable;
#[cfg(target_os = "linux")]
pub use storage::UringStorage;
