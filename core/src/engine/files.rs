//! Whole-file reads and the durable replacement of a file, shared by open, verify, Erase in
//! place, snapshots and compaction.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::{io_error, outcome_unknown, too_large_to_read, AgentEngine};
use crate::error::Error;
use crate::error_facts::StorageOperation;
use crate::log::names::TEMPORARY_SUFFIX;
use crate::storage::{Storage, StorageFile};

/// Reads a whole file.
pub(crate) fn read_all<F: StorageFile>(file: &F, path: &str) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    read_all_into(file, path, &mut bytes)?;
    Ok(bytes)
}

/// Reads a whole file into `bytes`, replacing what it held. Reading many files through one
/// buffer touches its memory once, where a fresh buffer for each costs the system a page fault
/// for every page, several percent of a verification.
pub(crate) fn read_all_into<F: StorageFile>(file: &F, path: &str, bytes: &mut Vec<u8>) -> Result<(), Error> {
    let length = file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
    let length = usize::try_from(length).map_err(|_| too_large_to_read(length))?;
    if bytes.capacity() < length {
        // Zeroed memory fresh from the system costs no writes before the read.
        *bytes = vec![0u8; length];
    } else {
        // The read overwrites every byte kept: only a longer file needs new bytes set.
        bytes.truncate(length);
        bytes.resize(length, 0);
    }
    file.read_at(0, bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))
}

/// Reads a file's bytes from `offset` to its end.
pub(crate) fn read_from<F: StorageFile>(file: &F, path: &str, offset: u64) -> Result<Vec<u8>, Error> {
    let length = file.len().map_err(|error| io_error(StorageOperation::Measuring, path, error))?;
    let tail =
        usize::try_from(length.saturating_sub(offset)).map_err(|_| too_large_to_read(length.saturating_sub(offset)))?;
    let mut bytes = vec![0u8; tail];
    file.read_at(offset, &mut bytes).map_err(|error| io_error(StorageOperation::Reading, path, error))?;
    Ok(bytes)
}

impl<S: Storage> AgentEngine<S> {
    /// Replaces the file at `path` with `bytes`: temporary file, sync, rename, folder sync. A
    /// failure before the rename is `Io` (nothing changed); from the rename on, `OutcomeUnknown`.
    pub(crate) fn replace_file(&self, path: &str, bytes: &[u8]) -> Result<(), Error> {
        let temporary = format!("{path}{TEMPORARY_SUFFIX}");
        let mut file = self
            .storage
            .open_file(&temporary, true)
            .map_err(|error| io_error(StorageOperation::Creating, &temporary, error))?;
        file.set_len(0)
            .and_then(|()| file.write_at(0, bytes))
            .and_then(|()| file.sync())
            .map_err(|error| io_error(StorageOperation::Writing, &temporary, error))?;
        drop(file);
        // From the rename on, the new file may be in place: a failure is no refusal.
        let renamed = self.storage.rename(&temporary, path);
        renamed.map_err(|error| outcome_unknown(io_error(StorageOperation::Renaming, &temporary, error)))?;
        if mutant!(SkipFolderSyncAfterRename) {
            return Ok(());
        }
        let synced = self.storage.sync_folder(&self.folder);
        synced.map_err(|error| outcome_unknown(io_error(StorageOperation::Syncing, &self.folder, error)))
    }
}
