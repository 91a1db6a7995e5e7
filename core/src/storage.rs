//! The I/O trait: the only way the engine reaches a disk, a clock-free world of named files.
//!
//! A [`Storage`] is a root folder holding files and one level of sub-folders. Paths are
//! relative, use `/` as the separator, and are always built by the engine from fixed-format
//! names (`agent-00000000000000a1/segment-0000000000000001.log`): they never contain `..`, an
//! absolute prefix or a user-supplied string, so a backend may join them to its root as they are.
//!
//! # Crash contract
//!
//! The engine is correct for any backend that keeps the promises written on each method. In short:
//! bytes written to a file are volatile until [`StorageFile::sync`] returns `Ok`; names created,
//! renamed or removed in a folder are volatile until [`Storage::sync_folder`] on that folder
//! returns `Ok`. After a crash, each volatile change may have happened fully, not at all, or (for
//! file writes only) partly, with any byte in the written range replaced by garbage. Durable
//! state is never changed by a crash.

use alloc::string::String;
use alloc::vec::Vec;

use crate::storage_error::StorageError;

/// The two kinds of name the engine makes: plain files and folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A plain file.
    File,
    /// A folder.
    Folder,
}

/// A folder of files as the engine needs it. Implementations: the std files backend, the
/// io_uring backend and the fault-injecting simulator.
pub trait Storage {
    /// An open file.
    type File: StorageFile<Error = Self::Error>;
    /// The backend's error; the engine wraps it with the operation, the path and its kind,
    /// and keeps it as the source of its own error.
    type Error: StorageError;

    /// Opens the file at `path`; with `create`, makes it (empty) if it does not exist.
    ///
    /// Crash: a newly created file is a volatile name until its folder is synced.
    ///
    /// # Errors
    ///
    /// The backend's error when the file cannot be opened or made; without `create`, one of
    /// kind `StorageErrorKind::NotFound` when no file is at `path`.
    fn open_file(&self, path: &str, create: bool) -> Result<Self::File, Self::Error>;

    /// Whether a file or folder exists at `path`.
    ///
    /// # Errors
    ///
    /// The backend's error when it cannot tell (a missing name is `Ok(false)`, not an error).
    fn exists(&self, path: &str) -> Result<bool, Self::Error>;

    /// Whether a `kind` stands at `path` itself: not a link to one, not a file where a folder
    /// should be, not anything else (a pipe, a device). Removing an agent's folder removes only
    /// what passes this check. The default, whether the name exists, is right for a backend
    /// that holds nothing but the files and folders the engine made there.
    ///
    /// # Errors
    ///
    /// The backend's error when it cannot tell; the default returns what
    /// [`Storage::exists`] returns.
    fn holds(&self, path: &str, kind: NameKind) -> Result<bool, Self::Error> {
        let _ = kind;
        self.exists(path)
    }

    /// The names (not paths) of the files and folders directly inside `folder` (`""` is the
    /// root), in any order.
    ///
    /// # Errors
    ///
    /// The backend's error when `folder` cannot be read.
    fn list(&self, folder: &str) -> Result<Vec<String>, Self::Error>;

    /// Makes the folder `path` (its parent must exist). Succeeds if it already exists.
    ///
    /// Crash: volatile until the parent folder is synced.
    ///
    /// # Errors
    ///
    /// The backend's error when the folder cannot be made (its parent is missing, no space, no
    /// permission); never for a folder that already exists.
    fn create_folder(&self, path: &str) -> Result<(), Self::Error>;

    /// Removes the empty folder `path`.
    ///
    /// Crash: volatile until the parent folder is synced.
    ///
    /// # Errors
    ///
    /// The backend's error when the folder cannot be removed (it is not empty, or the system
    /// refuses).
    fn remove_folder(&self, path: &str) -> Result<(), Self::Error>;

    /// Atomically replaces `to` with `from`; both are in the same folder.
    ///
    /// Crash: until the folder is synced, a crash leaves either the old or the new name
    /// binding, never a mix of the two files' contents.
    ///
    /// # Errors
    ///
    /// The backend's error when `from` does not exist or the rename is refused.
    fn rename(&self, from: &str, to: &str) -> Result<(), Self::Error>;

    /// Removes the file at `path`.
    ///
    /// Crash: volatile until the folder is synced.
    ///
    /// # Errors
    ///
    /// The backend's error when the file does not exist or cannot be removed.
    fn remove_file(&self, path: &str) -> Result<(), Self::Error>;

    /// Makes every create, rename and remove inside `folder` (`""` is the root) durable.
    ///
    /// # Errors
    ///
    /// The backend's error when the sync fails; the changes inside `folder` may or may not be
    /// durable then.
    fn sync_folder(&self, folder: &str) -> Result<(), Self::Error>;

    /// Fills `out` with unpredictable bytes (tokens and content salts depend on it).
    ///
    /// # Errors
    ///
    /// The backend's error when it has no unpredictable bytes to give.
    fn fill_random(&self, out: &mut [u8]) -> Result<(), Self::Error>;
}

/// One open file of a [`Storage`].
pub trait StorageFile {
    /// The backend's error.
    type Error: StorageError;

    /// The file's current length in bytes, including volatile writes.
    ///
    /// # Errors
    ///
    /// The backend's error when the length cannot be read.
    fn len(&self) -> Result<u64, Self::Error>;

    /// Whether the file holds no bytes.
    ///
    /// # Errors
    ///
    /// As [`StorageFile::len`], which the default calls.
    fn is_empty(&self) -> Result<bool, Self::Error> {
        Ok(self.len()? == 0)
    }

    /// Reads exactly `out.len()` bytes at `offset`; reading past the end is an error.
    ///
    /// # Errors
    ///
    /// The backend's error when the read fails or the range passes the end of the file.
    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), Self::Error>;

    /// Writes all of `bytes` at `offset`, growing the file if needed.
    ///
    /// Crash: not durable until [`StorageFile::sync`]; a crash may keep all, none or part of the
    /// range, and a kept part may hold garbage.
    ///
    /// # Errors
    ///
    /// The backend's error when the write fails (no space, a device error); part of the range
    /// may have been written then.
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Makes every byte written before this call, and the file's length, durable.
    ///
    /// An error means nothing about what is durable: the engine stops writing to this file.
    ///
    /// # Errors
    ///
    /// The backend's error when the sync fails.
    fn sync(&mut self) -> Result<(), Self::Error>;

    /// Cuts or extends the file to `length` bytes (extension reads as zeros). Used by recovery.
    ///
    /// Crash: volatile until [`StorageFile::sync`].
    ///
    /// # Errors
    ///
    /// The backend's error when the length cannot be changed.
    fn set_len(&mut self, length: u64) -> Result<(), Self::Error>;
}
