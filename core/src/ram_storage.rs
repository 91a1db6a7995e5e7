//! A storage that lives in RAM: for examples, unit tests and embedders who want no files.
//! Nothing survives the value being dropped, and its "random" bytes are a fixed sequence, so
//! tokens made with it are predictable. Use the `cheesedb` crate's files for real data.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::fmt;

use crate::storage::{Storage, StorageFile};
use crate::storage_error::{StorageError, StorageErrorKind};

/// Why an operation of [`RamStorage`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RamStorageError {
    message: &'static str,
    kind: StorageErrorKind,
}

impl RamStorageError {
    /// No file or folder has the name asked for.
    const fn not_found(message: &'static str) -> RamStorageError {
        RamStorageError { message, kind: StorageErrorKind::NotFound }
    }

    /// Any other failure.
    const fn other(message: &'static str) -> RamStorageError {
        RamStorageError { message, kind: StorageErrorKind::Other }
    }
}

impl fmt::Display for RamStorageError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.message)
    }
}

impl core::error::Error for RamStorageError {}

impl StorageError for RamStorageError {
    fn kind(&self) -> StorageErrorKind {
        self.kind
    }
}

type Contents = Rc<RefCell<Vec<u8>>>;

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<String, Contents>,
    folders: BTreeSet<String>,
    random: Cell<u64>,
}

/// Files in RAM. Clones share the same files.
#[derive(Debug, Clone, Default)]
pub struct RamStorage {
    state: Rc<RefCell<State>>,
}

/// An open file of a [`RamStorage`].
#[derive(Debug)]
pub struct RamFile {
    contents: Contents,
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

impl RamStorage {
    /// Every file's path and bytes, for tests that search the whole store.
    #[must_use]
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let state = self.state.borrow();
        state.files.iter().map(|(path, contents)| (path.clone(), contents.borrow().clone())).collect()
    }
}

impl Storage for RamStorage {
    type File = RamFile;
    type Error = RamStorageError;

    fn open_file(&self, path: &str, create: bool) -> Result<RamFile, RamStorageError> {
        let mut state = self.state.borrow_mut();
        let folder = parent(path);
        if !folder.is_empty() && !state.folders.contains(folder) {
            return Err(RamStorageError::not_found("no such folder"));
        }
        if let Some(contents) = state.files.get(path) {
            return Ok(RamFile { contents: contents.clone() });
        }
        if !create {
            return Err(RamStorageError::not_found("no such file"));
        }
        let contents = Contents::default();
        state.files.insert(path.to_string(), contents.clone());
        Ok(RamFile { contents })
    }

    fn exists(&self, path: &str) -> Result<bool, RamStorageError> {
        let state = self.state.borrow();
        Ok(state.files.contains_key(path) || state.folders.contains(path))
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, RamStorageError> {
        let state = self.state.borrow();
        let inside =
            |path: &String| (parent(path) == folder).then(|| path.rsplit('/').next().unwrap_or_default().to_string());
        Ok(state.files.keys().chain(state.folders.iter()).filter_map(inside).collect())
    }

    fn create_folder(&self, path: &str) -> Result<(), RamStorageError> {
        self.state.borrow_mut().folders.insert(path.to_string());
        Ok(())
    }

    fn remove_folder(&self, path: &str) -> Result<(), RamStorageError> {
        let mut state = self.state.borrow_mut();
        if state.files.keys().any(|file| parent(file) == path) {
            return Err(RamStorageError::other("folder not empty"));
        }
        state.folders.remove(path);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), RamStorageError> {
        let mut state = self.state.borrow_mut();
        let contents = state.files.remove(from).ok_or(RamStorageError::not_found("no such file"))?;
        state.files.insert(to.to_string(), contents);
        Ok(())
    }

    fn remove_file(&self, path: &str) -> Result<(), RamStorageError> {
        self.state.borrow_mut().files.remove(path).map(|_| ()).ok_or(RamStorageError::not_found("no such file"))
    }

    fn sync_folder(&self, _folder: &str) -> Result<(), RamStorageError> {
        Ok(())
    }

    fn fill_random(&self, out: &mut [u8]) -> Result<(), RamStorageError> {
        let state = self.state.borrow();
        for byte in out {
            // A fixed linear congruential sequence: deterministic, and not a secret.
            let next =
                state.random.get().wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state.random.set(next);
            *byte = (next >> 56) as u8;
        }
        Ok(())
    }
}

impl StorageFile for RamFile {
    type Error = RamStorageError;

    fn len(&self) -> Result<u64, RamStorageError> {
        Ok(self.contents.borrow().len() as u64)
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), RamStorageError> {
        let contents = self.contents.borrow();
        let start = usize::try_from(offset).map_err(|_| RamStorageError::other("offset too large"))?;
        let end = start.checked_add(out.len()).ok_or(RamStorageError::other("offset too large"))?;
        let source = contents.get(start..end).ok_or(RamStorageError::other("read past the end"))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), RamStorageError> {
        let mut contents = self.contents.borrow_mut();
        let start = usize::try_from(offset).map_err(|_| RamStorageError::other("offset too large"))?;
        let end = start.checked_add(bytes.len()).ok_or(RamStorageError::other("offset too large"))?;
        if contents.len() < end {
            contents.resize(end, 0);
        }
        if let Some(target) = contents.get_mut(start..end) {
            target.copy_from_slice(bytes);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), RamStorageError> {
        Ok(())
    }

    fn set_len(&mut self, length: u64) -> Result<(), RamStorageError> {
        let length = usize::try_from(length).map_err(|_| RamStorageError::other("length too large"))?;
        self.contents.borrow_mut().resize(length, 0);
        Ok(())
    }
}
