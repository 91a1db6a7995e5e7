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

/// Why an operation of [`MemoryStorage`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryError {
    message: &'static str,
    kind: StorageErrorKind,
}

impl MemoryError {
    /// No file or folder has the name asked for.
    const fn not_found(message: &'static str) -> MemoryError {
        MemoryError { message, kind: StorageErrorKind::NotFound }
    }

    /// Any other failure.
    const fn other(message: &'static str) -> MemoryError {
        MemoryError { message, kind: StorageErrorKind::Other }
    }
}

impl fmt::Display for MemoryError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.message)
    }
}

impl core::error::Error for MemoryError {}

impl StorageError for MemoryError {
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
pub struct MemoryStorage {
    state: Rc<RefCell<State>>,
}

/// An open file of a [`MemoryStorage`].
#[derive(Debug)]
pub struct MemoryFile {
    contents: Contents,
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

impl MemoryStorage {
    /// Every file's path and bytes, for tests that search the whole store.
    #[must_use]
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let state = self.state.borrow();
        state.files.iter().map(|(path, contents)| (path.clone(), contents.borrow().clone())).collect()
    }
}

impl Storage for MemoryStorage {
    type File = MemoryFile;
    type Error = MemoryError;

    fn open_file(&self, path: &str, create: bool) -> Result<MemoryFile, MemoryError> {
        let mut state = self.state.borrow_mut();
        let folder = parent(path);
        if !folder.is_empty() && !state.folders.contains(folder) {
            return Err(MemoryError::not_found("no such folder"));
        }
        if let Some(contents) = state.files.get(path) {
            return Ok(MemoryFile { contents: contents.clone() });
        }
        if !create {
            return Err(MemoryError::not_found("no such file"));
        }
        let contents = Contents::default();
        state.files.insert(path.to_string(), contents.clone());
        Ok(MemoryFile { contents })
    }

    fn exists(&self, path: &str) -> Result<bool, MemoryError> {
        let state = self.state.borrow();
        Ok(state.files.contains_key(path) || state.folders.contains(path))
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, MemoryError> {
        let state = self.state.borrow();
        let inside =
            |path: &String| (parent(path) == folder).then(|| path.rsplit('/').next().unwrap_or_default().to_string());
        Ok(state.files.keys().chain(state.folders.iter()).filter_map(inside).collect())
    }

    fn create_folder(&self, path: &str) -> Result<(), MemoryError> {
        self.state.borrow_mut().folders.insert(path.to_string());
        Ok(())
    }

    fn remove_folder(&self, path: &str) -> Result<(), MemoryError> {
        let mut state = self.state.borrow_mut();
        if state.files.keys().any(|file| parent(file) == path) {
            return Err(MemoryError::other("folder not empty"));
        }
        state.folders.remove(path);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), MemoryError> {
        let mut state = self.state.borrow_mut();
        let contents = state.files.remove(from).ok_or(MemoryError::not_found("no such file"))?;
        state.files.insert(to.to_string(), contents);
        Ok(())
    }

    fn remove_file(&self, path: &str) -> Result<(), MemoryError> {
        self.state.borrow_mut().files.remove(path).map(|_| ()).ok_or(MemoryError::not_found("no such file"))
    }

    fn sync_folder(&self, _folder: &str) -> Result<(), MemoryError> {
        Ok(())
    }

    fn fill_random(&self, out: &mut [u8]) -> Result<(), MemoryError> {
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

impl StorageFile for MemoryFile {
    type Error = MemoryError;

    fn len(&self) -> Result<u64, MemoryError> {
        Ok(self.contents.borrow().len() as u64)
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let contents = self.contents.borrow();
        let start = usize::try_from(offset).map_err(|_| MemoryError::other("offset too large"))?;
        let end = start.checked_add(out.len()).ok_or(MemoryError::other("offset too large"))?;
        let source = contents.get(start..end).ok_or(MemoryError::other("read past the end"))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        let mut contents = self.contents.borrow_mut();
        let start = usize::try_from(offset).map_err(|_| MemoryError::other("offset too large"))?;
        let end = start.checked_add(bytes.len()).ok_or(MemoryError::other("offset too large"))?;
        if contents.len() < end {
            contents.resize(end, 0);
        }
        if let Some(target) = contents.get_mut(start..end) {
            target.copy_from_slice(bytes);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), MemoryError> {
        Ok(())
    }

    fn set_len(&mut self, length: u64) -> Result<(), MemoryError> {
        let length = usize::try_from(length).map_err(|_| MemoryError::other("length too large"))?;
        self.contents.borrow_mut().resize(length, 0);
        Ok(())
    }
}
