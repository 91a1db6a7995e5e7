//! The errors of the simulated disk.

use std::fmt;

use cheesedb_core::{StorageError, StorageErrorKind};

use super::faults::FaultKind;

/// Why an operation of the simulated disk failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimError {
    /// The crash point was reached: the machine is off until the crash is applied.
    PowerLost,
    /// A handle opened before the last crash was used.
    StaleHandle,
    /// No file or folder has that path, or its folder does not exist.
    NotFound,
    /// The folder to remove is not empty.
    NotEmpty,
    /// The path is a folder where a file was expected, or the other way round.
    WrongKind,
    /// A rename across folders (the trait promises it never happens).
    CrossFolderRename,
    /// A read past the end of a file.
    ReadPastEnd,
    /// An injected fault.
    Injected(FaultKind),
}

impl fmt::Display for SimError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::PowerLost => formatter.write_str("power lost (simulated crash)"),
            SimError::StaleHandle => formatter.write_str("file handle from before a crash"),
            SimError::NotFound => formatter.write_str("no such file or folder"),
            SimError::NotEmpty => formatter.write_str("folder not empty"),
            SimError::WrongKind => formatter.write_str("file where a folder was expected, or the reverse"),
            SimError::CrossFolderRename => formatter.write_str("rename across folders"),
            SimError::ReadPastEnd => formatter.write_str("read past the end of the file"),
            SimError::Injected(kind) => write!(formatter, "injected fault: {}", kind.name()),
        }
    }
}

impl std::error::Error for SimError {}

impl StorageError for SimError {
    fn kind(&self) -> StorageErrorKind {
        match self {
            SimError::NotFound => StorageErrorKind::NotFound,
            SimError::Injected(FaultKind::NoSpace) => StorageErrorKind::NoSpace,
            SimError::PowerLost
            | SimError::StaleHandle
            | SimError::NotEmpty
            | SimError::WrongKind
            | SimError::CrossFolderRename
            | SimError::ReadPastEnd
            | SimError::Injected(_) => StorageErrorKind::Other,
        }
    }
}
