//! [`StorageOperation`]: what the engine was doing to a file or folder when storage failed.

use core::fmt;

/// What the engine was doing to a file or folder when storage failed ([`Error::Io`],
/// [`Error::OutcomeUnknown`]), or what a repair would do ([`Error::RepairNeeded`]). New
/// operations may be added; match with a wildcard arm.
///
/// [`Error::Io`]: crate::Error::Io
/// [`Error::OutcomeUnknown`]: crate::Error::OutcomeUnknown
/// [`Error::RepairNeeded`]: crate::Error::RepairNeeded
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StorageOperation {
    /// Asking whether a file or folder exists, or what it is.
    Checking,
    /// Reading the owner and permission bits of the store folder.
    CheckingPermissions,
    /// Making a new file or folder.
    Creating,
    /// Cutting a torn epoch slot from the end of an encrypted agent's epoch file.
    CuttingTornEpoch,
    /// Cutting a write that never committed from the end of the active segment (or of an
    /// encrypted agent's key table).
    CuttingTornEnd,
    /// Asking the backend for random bytes (tokens, keys, nonces, salts).
    DrawingRandomBytes,
    /// Making a file longer (preallocating the active segment).
    Growing,
    /// Listing a folder.
    Listing,
    /// Taking the lock of the store folder.
    Locking,
    /// Asking a file's length.
    Measuring,
    /// Opening a file or folder.
    Opening,
    /// Writing over bytes already in a file (erasing text in place).
    Overwriting,
    /// Reading bytes from a file.
    Reading,
    /// Reading back what an overwrite wrote, to see that it reached its place.
    ReadingBack,
    /// Removing a file or folder.
    Removing,
    /// Renaming a file into place.
    Renaming,
    /// Making written bytes or a folder's entries durable.
    Syncing,
    /// Making a file shorter.
    Trimming,
    /// Writing bytes to a file.
    Writing,
}

impl StorageOperation {
    /// The operation in words, as messages print it before the path ("while syncing agent-1").
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            StorageOperation::Checking => "checking",
            StorageOperation::CheckingPermissions => "checking the permissions of",
            StorageOperation::Creating => "creating",
            StorageOperation::CuttingTornEpoch => "cutting a torn epoch from",
            StorageOperation::CuttingTornEnd => "cutting the torn end of",
            StorageOperation::DrawingRandomBytes => "drawing random bytes for",
            StorageOperation::Growing => "growing",
            StorageOperation::Listing => "listing",
            StorageOperation::Locking => "locking",
            StorageOperation::Measuring => "measuring",
            StorageOperation::Opening => "opening",
            StorageOperation::Overwriting => "overwriting",
            StorageOperation::Reading => "reading",
            StorageOperation::ReadingBack => "reading back",
            StorageOperation::Removing => "removing",
            StorageOperation::Renaming => "renaming",
            StorageOperation::Syncing => "syncing",
            StorageOperation::Trimming => "trimming",
            StorageOperation::Writing => "writing",
        }
    }
}

impl fmt::Display for StorageOperation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
