//! [`StorageBackend`]: a storage backend that may be unavailable on a machine.

use core::fmt;

/// A storage backend that a machine may refuse ([`Error::BackendUnavailable`]). New backends
/// may be added; match with a wildcard arm.
///
/// [`Error::BackendUnavailable`]: crate::Error::BackendUnavailable
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StorageBackend {
    /// Linux's io_uring.
    Uring,
}

impl StorageBackend {
    /// The backend's name, as the command line spells it (`uring`).
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            StorageBackend::Uring => "uring",
        }
    }
}

impl fmt::Display for StorageBackend {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.describe())
    }
}
